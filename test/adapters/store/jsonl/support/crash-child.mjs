// Appends in a loop and prints `ack <stream> <rev> <id,id,...>` after each durable append. Killed with SIGKILL.
// Every event carries its chain hash (SHA-256 over RFC 8785, as the session log writes it), so a reopened store's
// chains can be verified.
// argv: <store module> <dir or file> <durability> <run id> <writers> [jsonl|sqlite] [<chain-hash module> <event-chain module>]
const [entry, path, durability, run, writersArg, kind = 'jsonl', hashModule, inputModule] = process.argv.slice(2);
const store = kind === 'sqlite' ? await (await import(entry)).openSqliteEventStore(path, { durability }) : await (await import(entry)).openJsonlEventStore(path, { durability });
const { sha256ChainHash } = hashModule ? await import(hashModule) : {};
const { chainInputOf, GENESIS_HASH } = inputModule ? await import(inputModule) : {};
process.stdout.write('ready\n');
const writers = Number(writersArg);
const writer = async (w) => {
  const stream = `crash/stream-${w}`;
  const current = await store.revision(stream);
  let expected = current === 'no_stream' ? 'no_stream' : current;
  let prev = GENESIS_HASH;
  for await (const e of store.read(stream, { direction: 'backwards', maxCount: 1 })) prev = e.hash ?? GENESIS_HASH;
  for (let i = 0; ; i++) {
    const size = 1 + (i % 3);
    const first = expected === 'no_stream' ? 0 : Number(expected) + 1;
    const events = Array.from({ length: size }, (_, j) => ({
      id: `${run}.${w}.${i}.${j}of${size}`,
      type: 'crash/test',
      time: 1_700_000_000_000 + i,
      data: { run, w, i, j, pad: 'x'.repeat((i * 37) % 300) },
    }));
    if (sha256ChainHash) {
      for (const [j, e] of events.entries()) {
        e.hash = sha256ChainHash(chainInputOf(stream, { ...e, seq: first + j }, prev));
        prev = e.hash;
      }
    }
    const r = await store.append(stream, events, expected);
    expected = r.nextExpectedRevision;
    process.stdout.write(`ack ${stream} ${r.nextExpectedRevision} ${events.map((e) => e.id).join(',')}\n`);
  }
};
await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
