import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { Host } from '../../host/host.js';
import { LiveSession } from '../../host/live-session.js';
import { promptMessage } from '../../host/prompt.js';
import type { HostFrame } from '../../host/schemas.js';
import { silentLogger } from '../../runtime/logger.js';
import { createRuntime } from '../../runtime/runtime.js';

const ctx = { rpcId: 'r', principal: { id: 'local' } };

type Action =
  | { readonly kind: 'send'; readonly steer: boolean; readonly wake: boolean }
  | { readonly kind: 'listen'; readonly on: boolean }
  | { readonly kind: 'read' }
  | { readonly kind: 'settle' };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('send' as const), steer: fc.boolean(), wake: fc.boolean() }),
  fc.record({ kind: fc.constant('listen' as const), on: fc.boolean() }),
  fc.constant({ kind: 'read' as const }),
  fc.constant({ kind: 'settle' as const }),
);

/** The queue a snapshot shows, as a reader sees it. */
const shown = (s: LiveSession['queue']) => (s === null ? null : { seq: s.seq, items: s.items.map((i) => ({ ...i })) });

describe('LiveSession: the queue projection folds only when its snapshots are wanted', () => {
  it('a session listened to now and then reads the queue and publishes the frames of one listened to always', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(action, { minLength: 1, maxLength: 40 }), async (gapless, actions) => {
        const host = new Host({
          runtime: createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: { text: 'ok' } }), logger: silentLogger, writeBatchDelayMs: 5 }),
          logger: silentLogger,
        });
        expect((await host.call('session.create', { sessionId: 's' }, ctx)).ok).toBe(true);
        expect((await host.call('session.prompt', { sessionId: 's', mode: 'queue', content: [{ type: 'text', text: 'first' }] }, ctx)).ok).toBe(true);
        const agent = host.live.get('s')!.agent;
        let on = false;
        const expected: HostFrame[] = [];
        const got: HostFrame[] = [];
        const eager = new LiveSession(agent, { gaplessHandoff: gapless, queueBeforeEvent: false, store: host.store, listening: () => true, publish: (f) => on && expected.push(f) });
        const lazy = new LiveSession(agent, { gaplessHandoff: gapless, queueBeforeEvent: false, store: host.store, listening: () => on, publish: (f) => got.push(f) });
        let n = 0;
        for (const a of actions) {
          if (a.kind === 'send') agent.send(promptMessage(`m${n++}`, [{ type: 'text', text: 'x' }], { kind: 'user', rpcId: 'r' }), a.steer ? 'next-step' : 'next-turn', a.wake);
          else if (a.kind === 'listen') on = a.on;
          else if (a.kind === 'read') expect(shown(lazy.queue)).toEqual(shown(eager.queue));
          else await new Promise((r) => setTimeout(r, 1));
        }
        await agent.whenIdle();
        expect(shown(lazy.queue)).toEqual(shown(eager.queue));
        expect(got.filter((f) => f.type !== 'host/session-status')).toEqual(expected.filter((f) => f.type !== 'host/session-status'));
        eager.detach();
        lazy.detach();
        await host.close();
      }),
      { numRuns: 40 },
    );
  });
});
