// Appends in a loop and prints `ack <stream> <rev> <id,id,...>` after each durable append. Killed with SIGKILL.
// argv: <store module> <dir> <durability> <run id> <writers>
const [entry, dir, durability, run, writersArg] = process.argv.slice(2);
const { openJsonlEventStore } = await import(entry);
const store = await openJsonlEventStore(dir, { durability });
process.stdout.write('ready\n');
const writers = Number(writersArg);
const writer = async (w) => {
  const stream = `crash/stream-${w}`;
  const current = await store.revision(stream);
  let expected = current === 'no_stream' ? 'no_stream' : current;
  for (let i = 0; ; i++) {
    const size = 1 + (i % 3);
    const events = Array.from({ length: size }, (_, j) => ({
      id: `${run}.${w}.${i}.${j}of${size}`,
      type: 'crash/test',
      time: 1_700_000_000_000 + i,
      data: { run, w, i, j, pad: 'x'.repeat((i * 37) % 300) },
    }));
    const r = await store.append(stream, events, expected);
    expected = r.nextExpectedRevision;
    process.stdout.write(`ack ${stream} ${r.nextExpectedRevision} ${events.map((e) => e.id).join(',')}\n`);
  }
};
await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
