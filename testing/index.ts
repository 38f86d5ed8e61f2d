/**
 * `steerlog/testing`: what steerlog's own tests use to build logs and check deciders and projections, for your tests.
 * It imports no test runner: failed expectations throw `node:assert`'s `AssertionError`.
 */
export { LogBuilder, msg, ctx, uuidAt } from './log-builder.js';
export {
  deciderSpecification,
  inboxSpecification,
  projectionSpecification,
  type Decider,
  type DeciderGiven,
  type DeciderOutcome,
  type DeciderSpecification,
  type ProjectionGiven,
  type ProjectionOutcome,
  type ProjectionSpecification,
  type ProjectionSpecificationOptions,
  type SpecificationEvents,
  type StreamEvent,
} from './specification.js';
export { ScriptedModel, echoModel, type ScriptStep, type ScriptedResponse, type ScriptContext, type ScriptedModelOptions } from '../adapters/model/scripted/scripted-model.js';
export { steppingClock, sequentialIds, type Clock, type IdSource } from '../runtime/ports/clock.js';
