// A diff worker thread (see diff-engine.ts): computes one unified diff per message, so that the
// quadratic worst case of Myers' algorithm never holds the thread that answers requests.
import { parentPort } from 'node:worker_threads';
import { unifiedDiff } from './unified-diff.mjs';

parentPort?.on('message', ({ id, fileName, from, to, timeoutMs }) => {
  try {
    parentPort?.postMessage({ id, diff: unifiedDiff(fileName, from, to, { timeoutMs }) });
  } catch (error) {
    parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
