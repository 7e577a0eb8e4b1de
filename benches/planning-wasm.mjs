// Times the core's planning benchmark built for wasm32-unknown-unknown (see
// crates/core/benches/planning.rs and BENCHMARKS.md) in Node, one or more builds side by
// side: each round runs every build once, in turn, so that a busy machine disturbs them
// alike. Not a test: prints the goodput each build found (they must agree) and the best
// and median time.
//
//   cargo build --release --target wasm32-unknown-unknown -p goodput-core --bench planning
//   node benches/planning-wasm.mjs search|cold|sweep ROUNDS BUILD.wasm [BUILD.wasm ...]
//
// search: bench_search(), the default plan's goodput search (R = 20), the same seeds
//         every round, as "Run again" repeats it;
// cold:   bench_search_cold(), that search with the traffic's store of draws emptied
//         first, as in a fresh worker (a build without that export, one from before the
//         store, runs bench_search() instead: it has nothing to empty);
// sweep:  bench_sweep(), the default 6 × 6 knob sweep (R = 5).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [what = 'search', roundsArg = '10', ...files] = process.argv.slice(2);
const rounds = Number(roundsArg);
const call = {
  search: (x) => x.bench_search(),
  cold: (x) => (x.bench_search_cold ?? x.bench_search)(),
  sweep: (x) => x.bench_sweep(),
}[what];
if (!call || !(rounds >= 1) || files.length === 0) {
  console.error('usage: node benches/planning-wasm.mjs search|cold|sweep ROUNDS BUILD.wasm [BUILD.wasm ...]');
  process.exit(2);
}

const builds = [];
for (const file of files) {
  const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
  builds.push({ name: basename(file), x: instance.exports, ms: [], answers: new Set() });
}

// Two rounds first, untimed: the engine optimises the hot code.
for (let r = -2; r < rounds; r += 1) {
  for (const b of builds) {
    const t = performance.now();
    const answer = call(b.x);
    const ms = performance.now() - t;
    if (r >= 0) {
      b.ms.push(ms);
      b.answers.add(answer);
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
for (const b of builds) {
  const answers = [...b.answers].join(', ');
  console.log(
    `${b.name}: ${what}, ${rounds} rounds: best ${Math.min(...b.ms).toFixed(1)} ms, ` +
      `median ${median(b.ms).toFixed(1)} ms${answers ? `; answer ${answers}` : ''}`,
  );
}
