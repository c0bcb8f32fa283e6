// Starts the real `model-inspector open` (MI_BINARY) on a free port and
// returns its URL (the first line it prints) and a stop function.

import { spawn } from 'node:child_process';
import { fail, miBinary } from './lib.mjs';

export async function startServer(extraArgs = [], timeoutMs = 180000) {
  const bin = miBinary();
  const args = ['open', '--port', '0', '--no-browser', ...extraArgs];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL after ${timeoutMs} ms`)), timeoutMs);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^(https?:\/\/\S+)\s*$/m);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code} before printing a URL`)); });
  }).catch((e) => fail(`${bin} ${args.join(' ')}: ${e.message}\n${stderr.trim()}`));
  return {
    url,
    stderr: () => stderr,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) { resolve(child.exitCode); return; }
      child.on('exit', resolve);
      child.kill('SIGTERM');
      setTimeout(() => { if (child.exitCode === null) child.kill('SIGKILL'); }, 5000);
    }),
  };
}
