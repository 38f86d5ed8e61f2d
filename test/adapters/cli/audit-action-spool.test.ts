import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionSpool } from '../../../adapters/cli/audit-action-spool.js';
import type { ActorAction, ActorActionKind } from '../../../domain/actor-actions.js';

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
