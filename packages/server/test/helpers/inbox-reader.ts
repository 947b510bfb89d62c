// An agent that reads its inbox and handles each message, as its own process, so a test can kill
// it (SIGKILL) at any moment and start it again. Handling a message is appending `seq id` to a
// log file (its durable work); then it acknowledges the message. After a restart it first
// acknowledges the last message its log holds: a kill between the append and the acknowledgement
// must not make it handle that message twice.
//   tsx inbox-reader.ts <baseUrl> <spaceId> <key> <log>
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

const [baseUrl, spaceId, key, log] = process.argv.slice(2) as [string, string, string, string];
const headers = { 'x-private-key': key, 'content-type': 'application/json' };
const inbox = `${baseUrl}/hub/space/${spaceId}/inbox`;

async function ack(seq: number): Promise<void> {
  const res = await fetch(`${inbox}/ack`, { method: 'POST', headers, body: JSON.stringify({ seq }) });
  if (!res.ok) throw new Error(`ack ${seq}: ${res.status} ${await res.text()}`);
}

const handled = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [];
const last = handled.at(-1);
if (last) await ack(Number(last.split(' ')[0]));

for (;;) {
  const res = await fetch(`${inbox}?wait=10`, { headers });
  if (!res.ok) throw new Error(`inbox: ${res.status} ${await res.text()}`);
  const page = (await res.json()) as { messages: { seq: number; id: string }[] };
  for (const message of page.messages) {
    appendFileSync(log, `${message.seq} ${message.id}\n`);
    await ack(message.seq);
  }
}
