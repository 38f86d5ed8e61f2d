import type { SessionCreatedData } from '../events.js';
import type { SubagentDescriptorData } from './subagent-events.js';

/**
 * Why a stored child's catalog row cannot take a user's follow-up although it names the parent:
 * - `mode-mismatch`: its header's kind and its own descriptor's mode disagree (the log contradicts itself);
 * - `route-unavailable`: its descriptor names a model route (`agentProvider` / `agentModel`) this deployment does
 *   not serve, so resuming it would run it on a model it was not started with.
 */
export type ChildCatalogDiagnostic = 'mode-mismatch' | 'route-unavailable';

/**
 * The diagnostic of a child's catalog row, or null when it is a regular row. A child with no descriptor of its own
 * is NOT a diagnostic here: the delivery itself answers it (`subagent-not-resumable`, "do not retry").
 */
export const childCatalogDiagnostic = (
  header: SessionCreatedData,
  descriptor: SubagentDescriptorData | null,
  servesRoute: (descriptor: SubagentDescriptorData) => boolean,
): ChildCatalogDiagnostic | null => {
  if (descriptor === null) return null;
  if (descriptor.mode !== header.kind) return 'mode-mismatch';
  if (!servesRoute(descriptor)) return 'route-unavailable';
  return null;
};
