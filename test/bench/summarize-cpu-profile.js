// Prints where a .cpuprofile spends its time: self time by function and by package or source file,
// and total (inclusive) time of the functions that name the ingest steps.
//   node test/bench/summarize-cpu-profile.js .bench/tributary-server-<pid>.cpuprofile [top]
'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');

const [file, topText = '25'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/bench/summarize-cpu-profile.js <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topText);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

// Self time per node from the samples and their time deltas (microseconds).
const selfTime = new Map();
profile.samples.forEach((id, index) => {
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const total = [...selfTime.values()].reduce((sum, value) => sum + value, 0);

const where = (frame) => {
  const url = frame.url.replace(/^file:\/\//, '');
  const inModules = url.lastIndexOf('node_modules/');
  if (inModules >= 0) {
    const parts = url.slice(inModules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:') || url === '') return url || '(native)';
  return path.relative(path.join(__dirname, '..', '..'), url);
};
const label = (frame) => `${frame.functionName || '(anonymous)'} ${where(frame)}:${frame.lineNumber + 1}`;

const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value);
const byFunction = new Map();
const byPlace = new Map();
for (const [id, time] of selfTime) {
  const frame = nodes.get(id).callFrame;
  add(byFunction, label(frame), time);
  add(byPlace, where(frame), time);
}

// Inclusive time: a sample counts once for every distinct function on its stack.
const inclusive = new Map();
for (const [id, time] of selfTime) {
  const seen = new Set();
  for (let current = id; current !== undefined; current = parentOf.get(current)) {
    const key = label(nodes.get(current).callFrame);
    if (!seen.has(key)) {
      seen.add(key);
      add(inclusive, key, time);
    }
  }
}

const percent = (value) => `${((value / total) * 100).toFixed(1).padStart(5)} %`;
const print = (title, map, count, filter = () => true) => {
  console.log(`\n${title}`);
  [...map.entries()]
    .filter(([key]) => filter(key))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .forEach(([key, value]) => console.log(`${percent(value)}  ${key}`));
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
print('self time by package or file', byPlace, top);
print('self time by function', byFunction, top);
print('total time of our functions (apps/, libs/)', inclusive, top, (key) => / (apps|libs)\//.test(key));
