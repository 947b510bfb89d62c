import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { TParticipantView } from '@convene/contract';
import { defaultCoreConfig, ParticipantsCache, participantsForReply, systemClock } from '@convene/core';
import { describe, expect, it } from 'vitest';
import type { EventHub } from '../src/events/hub';
import { StreamConnection, type StreamConnectionOptions } from '../src/events/stream-connection';

/**
 * A response whose socket keeps what is written, unread: its writableLength only grows. Not
 * chunked (as an HTTP/1.0 client's), so what is written is the frames themselves.
 */
class UnreadResponse extends EventEmitter {
  writableEnded = false;
  destroyed = false;
  chunkedEncoding = false;
  written: Buffer[] = [];
  socket = {
    destroyed: false,
    writableLength: 0,
    writableNeedDrain: false,
    write: (chunk: string | Buffer): boolean => {
      const buffer = Buffer.from(chunk);
      this.written.push(buffer);
      this.socket.writableLength += buffer.length;
      return true;
    },
    cork: () => {},
    uncork: () => {},
    resetAndDestroy: () => {
      this.destroyed = true;
    },
  };
  get writableLength(): number {
    return this.socket.writableLength;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/** A stream of space `s` on `hub`, writing to `res`, unread past 64 kB; `options` add or replace. */
function connectionOn(
  hub: EventHub,
  res: UnreadResponse,
  options: Partial<StreamConnectionOptions> = {},
): StreamConnection {
  return new StreamConnection({
    hub,
    res: res as unknown as ServerResponse,
    spaceId: 's',
    clock: systemClock,
    lastEventId: undefined,
    timestamp: undefined,
    maxQueuedBytes: 64 * 1024,
    ...options,
  });
}

describe('StreamConnection', () => {
  it('writes a first context larger than the unread bound whole, then cuts off the next write', async () => {
    // 300 participants with long names: about 150 kB of context against a bound of 64 kB.
    const rows = Array.from({ length: 300 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      name: `参加者 ${i} ${'名'.repeat(150)}`,
      role: 'listens',
      status: 'active' as const,
      isOwner: false,
      isHuman: false,
      lastSeenAt: null,
      lastReadSeq: 0,
      created: i,
    }));
    const at = new ParticipantsCache().advance(defaultCoreConfig, 's', undefined, rows, 'S1');
    const participants: TParticipantView[] = participantsForReply(at.views);
    const res = new UnreadResponse();
    const hub = { subscribe: () => () => {}, read: async () => [], wakeAt: () => {} } as unknown as EventHub;
    const warnings: [object, string][] = [];
    const connection = connectionOn(hub, res, {
      log: { warn: (details, message) => void warnings.push([details, message]), error: () => {} },
    });
    await connection.begin({
      participantId: rows[0]!.id,
      eventSeq: 0,
      expiresAt: new Date(Date.now() + 60_000),
      context: { participants, artifacts: [], suggestedPollingIntervalMs: 2000 },
    });
    const text = Buffer.concat(res.written).toString();
    expect(text.startsWith('event: context\ndata: ')).toBe(true);
    expect(text.endsWith('\n\n')).toBe(true);
    expect(JSON.parse(text.slice('event: context\ndata: '.length, -2)).participants).toHaveLength(300);
    expect(res.writableLength).toBeGreaterThan(64 * 1024);
    expect(connection.isEnded).toBe(false);

    expect(warnings).toEqual([]);

    // The client still reads nothing: the next frame is not written, and the stream is cut off,
    // which the log tells apart from a client that left.
    connection.tick();
    expect(connection.isEnded).toBe(true);
    expect(Buffer.concat(res.written).toString()).toBe(text);
    expect(warnings).toEqual([
      [
        { spaceId: 's', unreadBytes: res.writableLength, lastEventId: 0 },
        'stream cut off: its client left too much unread (it may resume with Last-Event-ID)',
      ],
    ]);
  });
  it('asks the hub to wake it at its expiry, then closes as expired; holds its participant seen while live', async () => {
    let now = Date.parse('2026-11-24T12:00:00Z');
    const wakeUps: [string, number][] = [];
    const hub = {
      subscribe: () => () => {},
      read: async () => [],
      wakeAt: (spaceId: string, delayMs: number) => void wakeUps.push([spaceId, delayMs]),
    } as unknown as EventHub;
    const res = new UnreadResponse();
    const held: string[] = [];
    const connection = connectionOn(hub, res, {
      clock: { now: () => new Date(now) },
      presence: {
        keeper: { hold: (key) => void held.push(`+${key}`), release: (key) => void held.push(`-${key}`) },
        key: 'k1',
      },
    });
    // Not live yet: neither pinged, woken nor held.
    connection.tick();
    connection.wake();
    expect([held.length, wakeUps.length, res.written.length]).toEqual([0, 0, 0]);

    await connection.begin({
      participantId: 'p',
      eventSeq: 4,
      expiresAt: new Date(now + 60_000),
      context: { participants: [], artifacts: [], suggestedPollingIntervalMs: 2000 },
    });
    expect(wakeUps).toEqual([['s', 60_000]]);
    connection.tick();
    expect(held).toEqual(['+k1']);

    // Woken early (another stream of the space asked for sooner): it asks again for the rest.
    now += 45_000;
    connection.wake();
    expect(wakeUps).toEqual([
      ['s', 60_000],
      ['s', 15_000],
    ]);
    expect(connection.isEnded).toBe(false);

    now += 15_000;
    connection.wake();
    const text = Buffer.concat(res.written).toString();
    expect(text).toContain('id: 5\nevent: space-closed\ndata: {"spaceId":"s","reason":"expired"}\n\n');
    expect(connection.isEnded).toBe(true);
    expect(res.writableEnded).toBe(true);
    // Ended: released, once.
    expect(held).toEqual(['+k1', '-k1']);
  });
  it('releases what it holds however it ends: cut off for not reading; a refused one held nothing', async () => {
    const hub = { subscribe: () => () => {}, read: async () => [], wakeAt: () => {} } as unknown as EventHub;
    const held: string[] = [];
    const keeper = {
      hold: (key: string) => void held.push(`+${key}`),
      release: (key: string) => void held.push(`-${key}`),
    };
    const refused = connectionOn(hub, new UnreadResponse(), { presence: { keeper, key: 'never' } });
    refused.abandon();
    expect(held).toEqual([]);

    // A bound its first context overflows: the next tick cuts it off.
    const res = new UnreadResponse();
    const stalled = connectionOn(hub, res, { presence: { keeper, key: 'k2' }, maxQueuedBytes: 16 });
    await stalled.begin({
      participantId: 'p',
      eventSeq: 0,
      expiresAt: new Date(Date.now() + 60_000),
      context: { participants: [], artifacts: [], suggestedPollingIntervalMs: 2000 },
    });
    stalled.tick();
    expect(stalled.isEnded).toBe(true);
    expect(held).toEqual(['+k2', '-k2']);
  });
});
