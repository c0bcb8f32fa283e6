// The op-type palette (web/src/palette.ts) reads src/layout/op_palette.json
// like the server's SVG (src/layout/op_palette.cc): both must give the same
// colours, including the hash fallback. The vectors are the ones in
// src/layout/op_palette_test.cc.
import { importTs } from './lib.mjs';
import assert from 'node:assert/strict';

const { opColor, darker } = await importTs('base/palette');
const bytes = (c) => c.map((v) => Math.round(v * 255));

assert.deepEqual(bytes(opColor('Conv')), [0x8f, 0xb8, 0xf0]);
assert.deepEqual(bytes(darker(opColor('Conv'))), [79, 101, 132]);
assert.deepEqual(bytes(opColor('Add')), [0xf7, 0xc5, 0x8f]);
assert.deepEqual(bytes(opColor('MyCustomOp')), [239, 190, 223]);
assert.deepEqual(bytes(darker(opColor('MyCustomOp'))), [131, 104, 123]);
assert.deepEqual(bytes(opColor('ge:TransData')), [192, 239, 190]);
assert.deepEqual(bytes(darker(opColor('ge:TransData'))), [106, 131, 104]);
console.log('palette_test: ok');
