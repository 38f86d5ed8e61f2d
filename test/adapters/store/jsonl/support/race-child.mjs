// Races another process for every revision of one stream; prints a JSON summary of wins and losses.
// argv: <store module> <dir> <durability> <who> <rounds> <stream>
const [entry, dir, durability, who, roundsArg, stream] = process.argv.slice(2);
const { openJsonlEventStore } = await import(entry);
const store = await openJsonlEventStore(dir, { durability });
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
const wins = [];
const losses = [];
const other = [];
for (let r = 0; r < Number(roundsArg); r++) {
  try {
    await store.append(stream, [{ id: `${who}-${r}`, type: 'race/test', time: r, data: { who, r } }], r === 0 ? 'no_stream' : BigInt(r - 1));
    wins.push(r);
  } catch (e) {
    if (e?.code === 'concurrency') losses.push(r);
    else other.push(String(e?.stack ?? e));
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ wins, losses, other })}\n`);
process.stdin.destroy();
