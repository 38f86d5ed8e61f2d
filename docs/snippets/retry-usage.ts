import { createRuntime, createUserMessage, MemoryEventStore, retry, ScriptedModel, type Agent } from '../../index.js';

// #region request-error
/** A model that is rate limited twice; the runtime's policy retries, a hook gives one more chance to a 400. */
export const badMinute = async (): Promise<Agent> => {
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([
      { error: { message: 'slow down', code: 'rate_limit_exceeded', status: 429, providerRetryAfterMs: 20 } },
      { chunks: ['par'], error: { message: 'overloaded', code: 'HTTP_503', status: 503 } },
      'answered at the third attempt',
    ]),
    // the default policy, with tighter bounds (every option has a default; `retry: false` turns it off)
    retry: { maxAttempts: 4, baseDelayMs: 10, maxElapsedMs: 10_000 },
  });
  const agent = runtime.createSession();
  // the agent/request-error waterfall: next() is the policy's answer; retry() asks for a new attempt anyway
  agent.on('request-error', async ({ failure, attempt }, next) => {
    if (failure.status === 400 && attempt === 1) return retry(100);
    return next();
  });
  agent.followup(createUserMessage('hello'));
  await agent.whenIdle();
  return agent;
};
// #endregion request-error
