import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionSpool } from '../../../adapters/cli/audit-action-spool.js';
import type { ActorAction, ActorActionKind } from '../../../domain/actor-actions.js';
import { recordedActor } from '../../../domain/event-metadata.js';
import type { LogEvent } from '../../../domain/events.js';

const KINDS: readonly ActorActionKind[] = ['created', 'forked', 'admitted', 'edited', 'moved', 'canceled', 'stopped', 'woke', 'erased'];

describe('actionSpool', () => {
  const action = fc.record({
    seq: fc.nat(),
    time: fc.oneof(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
    kind: fc.constantFrom(...KINDS),
    id: fc.option(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme', maxLength: 3000 }))),
    turn: fc.option(fc.nat()),
    actor: fc.option(fc.string({ unit: 'binary' })),
    actorKind: fc.option(fc.constantFrom('user', 'agent', 'system')),
  }) as fc.Arbitrary<ActorAction>;

  it("writes the actions' JSON texts joined by commas, as JSON.stringify does, across flushes and restarts (property)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-action-spool-'));
    try {
      fc.assert(
        fc.property(fc.array(action, { maxLength: 40 }), fc.array(action, { maxLength: 40 }), fc.nat({ max: 2000 }), (dropped, kept, repeat) => {
          const spool = actionSpool(join(dir, 'actions.json'));
          for (const a of dropped) spool.push(a);
          spool.restart();
          // enough copies of the last action to cross the spool's 64 KiB buffer
          const all = kept.length === 0 ? [] : [...kept, ...Array.from({ length: repeat }, () => kept.at(-1)!)];
          for (const a of all) spool.push(a);
          spool.finish();
          expect(spool.count).toBe(all.length);
          expect(readFileSync(join(dir, 'actions.json'), 'utf8')).toBe(all.map((a) => JSON.stringify(a)).join(','));
        }),
        { numRuns: 300 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes an action given as its parts (pushPart) as push writes the action they make, interleaved with push (property)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-action-spool-'));
    const part = fc.record({
      seq: fc.nat(),
      time: fc.oneof(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
      kind: fc.constantFrom(...KINDS),
      id: fc.option(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme', maxLength: 3000 }))),
      turn: fc.option(fc.nat()),
      metadata: fc.option(fc.record({ actor: fc.option(fc.string({ unit: 'binary' }), { nil: undefined }), actorKind: fc.option(fc.constantFrom('user', 'agent', 'system', 'nobody'), { nil: undefined }) }, { requiredKeys: [] }), { nil: undefined }),
      asParts: fc.boolean(),
    });
    try {
      fc.assert(
        fc.property(fc.array(part, { maxLength: 60 }), fc.nat({ max: 1500 }), (parts, repeat) => {
          const spool = actionSpool(join(dir, 'actions.json'));
          const all = parts.length === 0 ? [] : [...parts, ...Array.from({ length: repeat }, () => parts.at(-1)!)];
          const expected: ActorAction[] = [];
          for (const p of all) {
            const event = { seq: p.seq, time: p.time, type: 'turn/end', data: {}, ...(p.metadata !== undefined ? { metadata: p.metadata } : {}) } as unknown as LogEvent;
            const by = recordedActor(event.metadata);
            const a: ActorAction = { seq: p.seq, time: p.time, kind: p.kind, id: p.id, turn: p.turn, actor: by.actor, actorKind: by.actorKind };
            expected.push(a);
            if (p.asParts) spool.pushPart(event, p.kind, p.id, p.turn);
            else spool.push(a);
          }
          spool.finish();
          expect(spool.count).toBe(all.length);
          expect(readFileSync(join(dir, 'actions.json'), 'utf8')).toBe(expected.map((a) => JSON.stringify(a)).join(','));
        }),
        { numRuns: 200 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the actions of one event (one seq and time, its text's head copied) as JSON.stringify does, across flushes, long ids and restarts (property)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-action-spool-'));
    // events of several actions each: their seq and time shared (0 and -0 alike), an id past the byte buffer now and then
    const number = fc.oneof(fc.constantFrom(0, -0, 1, 1_700_000_000_000, 2 ** 53 - 1, -(2 ** 53) + 1, 0.5, 1e21), fc.nat());
    const event = fc.record({
      seq: number,
      time: number,
      actions: fc.array(
        fc.record({
          kind: fc.constantFrom(...KINDS),
          id: fc.option(fc.oneof(fc.constantFrom('m-1', 'x'.repeat(9000)), fc.string({ unit: 'binary', maxLength: 8 }))),
          turn: fc.option(fc.nat()),
          actor: fc.option(fc.constantFrom('alice', 'b"ob')),
          actorKind: fc.option(fc.constantFrom('user', 'plugin', 'system')),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    });
    try {
      fc.assert(
        fc.property(fc.array(event, { maxLength: 30 }), fc.nat({ max: 400 }), fc.nat({ max: 30 }), (events, repeat, restartAt) => {
          const spool = actionSpool(join(dir, 'actions.json'));
          // enough copies of the last event to cross the spool's 64 KiB buffer
          const all = events.length === 0 ? [] : [...events, ...Array.from({ length: repeat }, () => events.at(-1)!)];
          let expected: ActorAction[] = [];
          all.forEach((e, i) => {
            if (i === restartAt) {
              spool.restart();
              expected = [];
            }
            for (const p of e.actions) {
              const a: ActorAction = { seq: e.seq, time: e.time, kind: p.kind, id: p.id, turn: p.turn, actor: p.actor, actorKind: p.actorKind };
              expected.push(a);
              spool.push(a);
            }
          });
          spool.finish();
          expect(spool.count).toBe(expected.length);
          expect(readFileSync(join(dir, 'actions.json'), 'utf8')).toBe(expected.map((a) => JSON.stringify(a)).join(','));
        }),
        { numRuns: 120 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a very long id (past its byte buffer) as JSON.stringify does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'steerlog-action-spool-'));
    try {
      const spool = actionSpool(join(dir, 'actions.json'));
      const all: ActorAction[] = [
        { seq: 1, time: 2, kind: 'admitted', id: 'm-1', turn: null, actor: null, actorKind: null },
        { seq: 2, time: 3, kind: 'admitted', id: `é${'\u0001'.repeat(70_000)}😀`, turn: null, actor: 'x', actorKind: 'user' },
        { seq: 3, time: -0, kind: 'stopped', id: null, turn: 4, actor: null, actorKind: null },
      ];
      for (const a of all) spool.push(a);
      spool.finish();
      expect(readFileSync(join(dir, 'actions.json'), 'utf8')).toBe(all.map((a) => JSON.stringify(a)).join(','));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
