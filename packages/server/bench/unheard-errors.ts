// Imported for its effect by the benchmark's processes (run.ts, fleet-child.ts). Twice a full run
// ended on a `socket hang up` that no listener heard, from a stack that names no code of ours:
// this says which process, and which request, before Node ends it.
import { ClientRequest } from 'node:http';
import { basename } from 'node:path';

const emit = ClientRequest.prototype.emit;
ClientRequest.prototype.emit = function (this: ClientRequest, event: string | symbol, ...args: unknown[]) {
  if (event === 'error' && this.listenerCount('error') === 0)
    console.error(
      `bench ${basename(process.argv[1] ?? '?')} (pid ${process.pid}): ${this.method} ${this.host}${this.path}` +
        ` failed with no listener (reused socket: ${this.reusedSocket}): ${String(args[0])}`,
    );
  return emit.call(this, event, ...args);
} as typeof emit;
