import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent, SessionCreatedData } from '../events.js';
import { ChildError } from './child-errors.js';
import type { SubagentDescriptorData } from './subagent-events.js';

/**
 * The child's own descriptor: the last `subagent/descriptor` at or after the seed boundary. A fork-seeded child
 * inherits its ancestor's log prefix, which may hold the ANCESTOR's descriptor; that one never describes this
 * child, so everything before `seedLength` is skipped.
 */
export const foldChildDescriptor = (header: SessionCreatedData, events: Iterable<LogEvent>): SubagentDescriptorData | null => {
  const seedLength = header.seedLength ?? 0;
  let found: SubagentDescriptorData | null = null;
  for (const e of events) if (e.seq >= seedLength && e.type === 'subagent/descriptor') found = e.data as SubagentDescriptorData;
  return found;
};

/**
 * What a cold resume may bring back: a continuable descriptor of the child's own, or `subagent-not-resumable`
 * ("do not retry with this id"): no descriptor after the seed, or a one-shot child.
 */
export const resumableDescriptor = (
  childSessionId: string,
  header: SessionCreatedData,
  events: Iterable<LogEvent>,
): E.Either<ChildError, SubagentDescriptorData> => {
  const descriptor = foldChildDescriptor(header, events);
  if (descriptor === null) {
    return E.left(new ChildError('subagent-not-resumable', childSessionId, `child ${childSessionId} has no descriptor of its own; do not retry with this id`));
  }
  if (descriptor.mode !== 'continuable') {
    return E.left(new ChildError('subagent-not-resumable', childSessionId, `child ${childSessionId} is ${descriptor.mode}; only continuable children resume`));
  }
  return E.right(descriptor);
};
