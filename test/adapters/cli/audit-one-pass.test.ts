import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { auditFile, auditStream } from '../../../audit/audit-fold.js';
import { isStreamFile } from '../../../adapters/store/jsonl/stream-file-log.js';
import { auditExtras } from '../../../audit/audit-extras.js';
import { parseAuditLimit, type AuditLimit } from '../../../audit/audit-limit.js';
import { auditFileOnePass, auditStreamOnePass } from '../../../audit/audit-pass.js';
import { startChainThread, verifyFileChain } from '../../../audit/chain-thread.js';
import { fileEnvelopes, storeEnvelopes } from '../../../audit/log-sources.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { sessionLog } from '../../../bench/support/session-log.js';
import { chainInputOf, GENESIS_HASH } from '../../../domain/event-chain.js';
import { sha256ChainHash } from '../../../runtime/chain-hash.js';

// `audit` reads the log once (auditFileOnePass / auditStreamOnePass): the fold's report and the extras (chain, fates,
// times) must be exactly those of the fold's own pass followed by the extras' own pass, on valid, invalid, tampered
// and oddly formatted logs, whole and at --at points.
const examples = fileURLToPath(new URL('../../../docs/examples', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'audit-one-pass-'));
/** The chain check forced onto a worker thread running the compiled entry (dist/, built by `npm ci`). */
const ON_A_THREAD = { env: { STEERLOG_CHAIN_THREAD: '1' }, entry: new URL('../../../dist/audit/chain-thread-entry.js', import.meta.url) };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A generated session log with hashes (as the session log writes them), as JSONL lines. */
const chainedLines = (events: number): string[] => {
  let prev = GENESIS_HASH;
  const lines: string[] = [];
  for (const e of sessionLog(events, 20, 'one-pass')) {
    const hash = sha256ChainHash(chainInputOf('one-pass', e, prev));
    prev = hash;
    lines.push(JSON.stringify({ ...e, hash }));
  }
  return lines;
};

const twoPasses = async (file: string, at?: AuditLimit) => ({ report: await auditFile(file, at), extras: await auditExtras(null, fileEnvelopes(file), at) });

const variants = (lines: readonly string[]): Record<string, string> => {
  const tampered = [...lines];
  tampered[7] = tampered[7]!.replace('"text":"message', '"text":"massage');
  return {
    whole: `${lines.join('\n')}\n`,
    'no final newline': lines.join('\n'),
    crlf: `${lines.join('\r\n')}\r\n`,
    tampered: `${tampered.join('\n')}\n`,
    'blank line inside': `${lines.slice(0, 9).join('\n')}\n\n${lines.slice(9).join('\n')}\n`,
    'blank lines at the end': `${lines.join('\n')}\n\n\n`,
    'a line that is not JSON': `${lines.slice(0, 5).join('\n')}\n{"seq":5,\n${lines.slice(6).join('\n')}\n`,
    'a carriage return inside a line': `${lines.slice(0, 4).join('\n')}\n${lines[4]!.replace(',"type"', ',\r"type"')}\n${lines.slice(5).join('\n')}\n`,
    'an event out of order': `${[...lines.slice(0, 3), lines[4]!, lines[3]!, ...lines.slice(5)].join('\n')}\n`,
  };
};

describe('audit in one pass = the fold pass + the extras pass', () => {
  const generated = chainedLines(400);
  it.each(Object.entries(variants(generated)))('generated chained log, %s (whole and at seq 0, 20, 200)', async (name, text) => {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(file, text);
    for (const at of [undefined, parseAuditLimit('0')!, parseAuditLimit('20')!, parseAuditLimit('200')!]) {
      const expected = await twoPasses(file, at);
      expect(await auditFileOnePass(file, at)).toEqual(expected);
      // the chain checked on a worker thread beside the fold (the compiled worker, as the CLI runs it): whole and at 20
      if (at === undefined || ('seq' in at && at.seq === 20)) expect(await auditFileOnePass(file, at, {}, undefined, null, ON_A_THREAD)).toEqual(expected);
    }
  });

  it('the worker thread is used when forced (and the tests above therefore compared it)', async () => {
    const file = join(dir, 'thread.jsonl');
    writeFileSync(file, `${generated.join('\n')}\n`);
    const thread = startChainThread(file, undefined, ON_A_THREAD);
    expect(thread).not.toBeNull();
    expect(await thread!.result).toEqual(await verifyFileChain(file, undefined));
    await thread!.stop();
    expect(startChainThread(file, undefined, { ...ON_A_THREAD, env: { STEERLOG_CHAIN_THREAD: '0' } })).toBeNull();
    expect(startChainThread(file, undefined, { entry: ON_A_THREAD.entry, env: {} })).toBeNull(); // small file: here
  });

  it('a worker that fails costs time, not the answer: the chain is then checked on the main thread', async () => {
    const file = join(dir, 'tampered-thread.jsonl');
    writeFileSync(file, variants(generated).tampered!);
    const broken = join(dir, 'broken-entry.mjs');
    writeFileSync(broken, 'throw new Error("this worker cannot start");\n');
    const thread = startChainThread(file, undefined, { env: { STEERLOG_CHAIN_THREAD: '1' }, entry: pathToFileURL(broken) });
    expect(await thread!.result).toEqual(await verifyFileChain(file, undefined));
    expect((await thread!.result).break).toMatchObject({ kind: 'hash-mismatch', seq: 7 });
    await thread!.stop();
  });

  it.each(readdirSync(examples).filter((n) => n.endsWith('.jsonl')))('docs/examples/%s', async (name) => {
    const file = join(examples, name);
    if (await isStreamFile(file)) return;
    expect(await auditFileOnePass(file)).toEqual(await twoPasses(file));
    // the same log with a blank line inside
    const lines = readFileSync(file, 'utf8').split('\n');
    const copy = join(dir, `blank-${name}`);
    writeFileSync(copy, [...lines.slice(0, 2), '', ...lines.slice(2)].join('\n'));
    expect(await auditFileOnePass(copy)).toEqual(await twoPasses(copy));
  });

  it('reads a store once with the same result as the fold and extras passes (whole, at a seq, and a missing session)', async () => {
    const store = new MemoryEventStore();
    const events = generated.map((l) => JSON.parse(l) as { id: string; type: string; time: number; data: unknown; hash: string });
    await store.append('one-pass', events.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data, hash: e.hash })), 'no_stream');
    for (const at of [undefined, parseAuditLimit('30')!]) {
      const report = await auditStream(store, 'one-pass', at);
      expect(await auditStreamOnePass(store, 'one-pass', at)).toEqual({ report, extras: await auditExtras('one-pass', storeEnvelopes(store, 'one-pass'), at) });
    }
    expect(await auditStreamOnePass(store, 'nobody')).toBeUndefined();
  });
});
