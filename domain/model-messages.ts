import type { AssistantMessage, LogEvent, ToolResultMessage } from './events.js';
import type { UserMessage } from './message.js';

/** A message as the model sees it: the surface of the log, in log order. */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** The model-facing message of one event, or null for events that are not surface messages. */
export const modelMessageOf = (event: LogEvent): ModelMessage | null => {
  switch (event.type) {
    case 'user/message':
      return event.data as UserMessage;
    case 'assistant/message':
      return (event.data as { message: AssistantMessage }).message;
    case 'tool/result':
      return (event.data as { message: ToolResultMessage }).message;
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
