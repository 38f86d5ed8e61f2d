import { isKnownEvent, type AssistantMessage, type LogEvent, type ToolResultMessage } from './events.js';
import type { UserMessage } from './message.js';

/** A message as the model sees it: the surface of the log, in log order. */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** The model-facing message of one event, or null for events that are not surface messages. */
export const modelMessageOf = (event: LogEvent): ModelMessage | null => {
  if (!isKnownEvent(event)) return null;
  switch (event.type) {
    case 'user/message':
      return event.data;
    case 'assistant/message':
      return event.data.message;
    case 'tool/result':
      return event.data.message;
    default:
      return null;
  }
};

/** Every surface message of a log in order: what a model request carries. */
export const deriveModelMessages = (events: Iterable<LogEvent>): ModelMessage[] => {
  const out: ModelMessage[] = [];
  for (const e of events) {
    const m = modelMessageOf(e);
    if (m) out.push(m);
  }
  return out;
};
