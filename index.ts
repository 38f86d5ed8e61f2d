/** steerlog's public API. */
export * from './domain/index.js';
export * from './runtime/ports/event-store.js';
export * from './runtime/ports/store-errors.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './adapters/store/memory/memory-event-store.js';
export * from './runtime/ports/model.js';
export * from './runtime/ports/clock.js';
export * from './runtime/errors.js';
export * from './runtime/logger.js';
export { enter, reject, type AgentHooks, type HookName, type PreStepListener, type TurnStoppingListener } from './runtime/hooks.js';
export type { Tool, ToolContext, ToolOutcome } from './runtime/tools.js';
export { Agent, type AgentInbox, type AgentOptions } from './runtime/agent.js';
export { SessionLog, type SessionLogOptions } from './runtime/session-log.js';
export { createRuntime, type Runtime, type RuntimeOptions, type CreateSessionOptions } from './runtime/runtime.js';
export { ScriptedModel, echoModel, type ScriptStep, type ScriptedResponse } from './adapters/model/scripted/scripted-model.js';
