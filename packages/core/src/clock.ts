/** The one source of time for TTLs (spaces, locks, link requests) and message timestamps. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests move by hand, so TTLs are tested without sleeping. */
export class FakeClock implements Clock {
  private current: number;
  constructor(start: Date | string = '2030-01-01T00:00:00.000Z') {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: Date | string): void {
    this.current = new Date(at).getTime();
  }
}

/**
 * A clock that follows the real one, shifted by a test-controlled offset: fine for servers under
 * test that also need real time to pass (streams, pings) while TTLs are jumped over.
 */
export class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
