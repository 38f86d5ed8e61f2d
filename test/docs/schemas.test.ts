import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../adapters/cli/main.js';
import { renderSchemas } from '../../docs/schemas/render-schemas.js';
import { chainedSession, testSigner } from '../support/chained-session.js';

const schemasDir = fileURLToPath(new URL('../../docs/schemas', import.meta.url));
const examples = fileURLToPath(new URL('../../docs/examples', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'steerlog-schemas-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = async (...argv: string[]) => {
  let stdout = '';
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => {} } });
  return { code, json: JSON.parse(stdout) as unknown };
};
const ajv = new Ajv({ allErrors: true, strict: false });
/** One compiled validator per schema file: compiling a schema costs far more than validating a value with it. */
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
const validator = (file: string) => {
  const known = compiled.get(file);
  if (known) return known;
  const schema = JSON.parse(readFileSync(join(schemasDir, file), 'utf8')) as object;
  const { $schema: _ignored, ...rest } = schema as { $schema?: string };
  const validate = ajv.compile(rest);
  compiled.set(file, validate);
  return validate;
};
const expectValid = (file: string, value: unknown): void => {
  const validate = validator(file);
  const ok = validate(value);
  expect(ok ? [] : validate.errors).toEqual([]);
};

describe('docs/schemas', () => {
  it('are exactly what the zod schemas generate', () => {
    const rendered = renderSchemas();
    expect(readdirSync(schemasDir).filter((f) => f.endsWith('.schema.json')).sort()).toEqual(Object.keys(rendered).sort());
    for (const [file, text] of Object.entries(rendered)) expect(readFileSync(join(schemasDir, file), 'utf8')).toBe(text);
  });

  it('every line of every example log and of a chained, signed session is a valid envelope', async () => {
    const lines = readdirSync(examples)
      .filter((f) => f.endsWith('.jsonl') && !f.startsWith('invalid-'))
      .flatMap((f) => readFileSync(join(examples, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown));
    const { signer } = testSigner();
    for (const e of [...lines, ...(await chainedSession('schema-session', { signer }))]) expectValid('envelope.schema.json', e);
    const validate = validator('envelope.schema.json');
    expect(validate({ seq: 0, id: 'x', time: 1, type: 't', data: {}, hash: 'not-hex' })).toBe(false);
  });

  it('real outputs of audit, verify, why and sessions validate', async () => {
    for (const f of readdirSync(examples).filter((x) => x.endsWith('.jsonl'))) {
      const file = join(examples, f);
      expectValid('audit.schema.json', (await run('audit', file, '--json')).json);
      expectValid('audit.schema.json', (await run('audit', file, '--json', '--at', '3')).json);
      expectValid('verify.schema.json', (await run('verify', file, '--json')).json);
      for (const id of ['A', 'prompt-1', 'call-1', 'secret', 'nope']) expectValid('why.schema.json', (await run('why', file, id, '--json')).json);
    }
    // the harness's logs (docs/examples/dsh): the same schemas, with `source`; and a refused one
    for (const f of readdirSync(join(examples, 'dsh')).filter((x) => /\.jsonl(\.zst)?$/.test(x))) {
      const file = join(examples, 'dsh', f);
      const audit = (await run('audit', file, '--json')).json as { source?: { format?: string } };
      expect(audit.source?.format).toBe('dsh');
      expectValid('audit.schema.json', audit);
      expectValid('verify.schema.json', (await run('verify', file, '--json')).json);
      for (const id of ['A', 'S', 'Q', 'call-1', 'nope']) expectValid('why.schema.json', (await run('why', file, id, '--json')).json);
    }
    const refused = join(tmp, 'refused.jsonl');
    writeFileSync(refused, `${JSON.stringify({ version: 0, id: 'r', createdAt: 1 })}\n${JSON.stringify({ type: 'goal/set', seq: 0, time: 2, data: {} })}\n`);
    const refusedAudit = (await run('audit', refused, '--json')).json as { errors: { code: string }[] };
    expect(refusedAudit.errors[0]!.code).toBe('dsh-unknown-type');
    expectValid('audit.schema.json', refusedAudit);
    const events = await chainedSession('schema-tampered');
    const tampered = join(tmp, 'tampered.jsonl');
    writeFileSync(tampered, events.map((e) => JSON.stringify(e.seq === 3 ? { ...e, time: 1 } : e)).join('\n'));
    expectValid('verify.schema.json', (await run('verify', tampered, '--json')).json);
    expectValid('audit.schema.json', (await run('audit', tampered, '--json')).json);
    const spec = `jsonl:${join(tmp, 'store')}`;
    await run('demo', '--store', spec, '--session', 'demo-schema', '--json');
    expectValid('sessions.schema.json', (await run('sessions', '--store', spec, '--json')).json);
    expectValid('audit.schema.json', (await run('audit', '--store', spec, 'demo-schema', '--json')).json);
    expectValid('why.schema.json', (await run('why', '--store', spec, 'demo-schema', 'steer-1', '--json')).json);
    const pub = join(tmp, 'pub.pem');
    const { publicKey } = testSigner();
    writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
    expectValid('verify.schema.json', (await run('verify', '--store', spec, '--all', '--pubkey', pub, '--json')).json);
    const future = String(Date.now() + 24 * 3600 * 1000);
    const dry = (await run('archive', '--store', spec, '--before', future, '--dry-run', '--json')).json as { archived: unknown[] };
    expectValid('archive.schema.json', dry);
    expect(dry.archived.length).toBe(1);
    const out = join(tmp, 'demo.jsonl.gz');
    const moved = (await run('archive', '--store', spec, '--before', future, '--out', out, '--json')).json as { archived: { deleted: boolean }[] };
    expectValid('archive.schema.json', moved);
    expect(moved.archived.map((a) => a.deleted)).toEqual([true]);
    expectValid('sessions.schema.json', (await run('sessions', '--store', `archive:${out}`, '--json')).json);
    expectValid('audit.schema.json', (await run('audit', '--store', `archive:${out}`, 'demo-schema', '--json')).json);
  });
});
