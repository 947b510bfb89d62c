// The SSE subscribers of one fan-out scenario, in their own process so that parsing their
// deliveries never delays the sender's measurements (and the other way round).
import { type FleetOptions, SseFleet } from './sse-fleet';
import './unheard-errors';

let fleet: SseFleet | undefined;
process.on('message', async (message: { open?: FleetOptions; finish?: { sent: number } }) => {
  try {
    if (message.open) {
      fleet = new SseFleet(message.open);
      await fleet.connect();
      process.send?.({ ready: true });
    } else if (message.finish && fleet) {
      await fleet.waitFor(message.finish.sent, 15_000);
      const summary = fleet.summary(message.finish.sent);
      fleet.close();
      // Every latency: a target's fleets are taken together (run.ts merges them). Megabytes of
      // them: the process ends once they are sent, not at a guess.
      process.send?.({ summary: { ...summary, latencies: fleet.latencies } }, undefined, {}, () =>
        process.exit(0),
      );
    }
  } catch (error) {
    process.send?.({ error: String(error) });
    setTimeout(() => process.exit(1), 200);
  }
});
