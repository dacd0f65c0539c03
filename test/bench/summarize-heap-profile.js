// Prints what a .heapprofile of `BENCH_CPU_PROFILE=1 BENCH_HEAP_PROFILE=1 npm run bench` allocated:
// the total sampled and the share of each allocating function (the objects collected meanwhile
// included, so the shares are of everything allocated over the profiled span, not of what is left).
//   node test/bench/summarize-heap-profile.js .bench/tributary-server-<pid>-<phase>.heapprofile [top]
'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');

const [file, topText = '30'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/bench/summarize-heap-profile.js <file.heapprofile> [top]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));

const where = (frame) => {
  const url = frame.url.replace(/^file:\/\//, '');
  const inModules = url.lastIndexOf('node_modules/');
  if (inModules >= 0) return url.slice(inModules + 'node_modules/'.length);
  if (url.startsWith('node:') || url === '') return url || '(native)';
  return path.relative(path.join(__dirname, '..', '..'), url);
};
const byFunction = new Map();
let total = 0;
const walk = (node) => {
  total += node.selfSize;
  const frame = node.callFrame;
  const key = `${frame.functionName || '(anonymous)'} ${where(frame)}:${frame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
  for (const child of node.children ?? []) walk(child);
};
walk(profile.head);

console.log(`${file}: ${(total / 1e6).toFixed(1)} MB sampled`);
console.log('');
console.log('allocated by function');
for (const [key, bytes] of [...byFunction]
  .sort((left, right) => right[1] - left[1])
  .slice(0, Number(topText))) {
  console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${key}`);
}
