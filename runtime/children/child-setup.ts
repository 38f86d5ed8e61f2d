import type { ChildMode, SubagentDescriptorData } from '../../domain/children/subagent-events.js';
import type { ModelPort } from '../ports/model.js';
import type { ChildrenOptions, StartChildSpec } from './child-options.js';

/** The descriptor a new child's log records right after its header: how to bring the child back later. */
export const descriptorOf = (spec: StartChildSpec, mode: ChildMode): SubagentDescriptorData => ({
  version: 1,
  mode,
  provider: spec.provider ?? 'spawn',
  label: spec.label ?? '',
  ...(spec.agentProvider !== undefined ? { agentProvider: spec.agentProvider } : {}),
  ...(spec.agentModel !== undefined ? { agentModel: spec.agentModel } : {}),
  ...(spec.persona !== undefined ? { persona: spec.persona } : {}),
  ...(spec.toolFilter !== undefined ? { toolFilter: [...spec.toolFilter] } : {}),
});

/** How a child's agent is set up: the session options the runtime takes at create and resume. */
export interface ChildAgentSetup {
  readonly systemPrompt?: string;
  readonly model?: ModelPort;
  readonly toolNames?: readonly string[];
}

/**
 * A child's agent setup from its descriptor, at start and at every cold resume: its system prompt, its model route,
 * and its tools — the descriptor's tool filter plus what the deployment contributes to continuable children now
 * (the `report` tool).
 */
export const childAgentSetup = (
  descriptor: SubagentDescriptorData,
  childSessionId: string,
  systemPrompt: NonNullable<ChildrenOptions['systemPrompt']>,
  route: ChildrenOptions['route'],
): ChildAgentSetup => {
  const prompt = systemPrompt(descriptor, childSessionId);
  const model = route?.(descriptor);
  const filter = descriptor.toolFilter;
  return {
    ...(prompt !== undefined ? { systemPrompt: prompt } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(filter !== undefined ? { toolNames: descriptor.mode === 'continuable' ? [...filter, 'report'] : filter } : {}),
  };
};
