import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  LockedError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
} from '@convene/sdk';
import { describe, expect, it } from 'vitest';
import { withSpaceId } from '../index';
import { describeError, joinEnded } from '../src/lib/errors';
import { formatDuration, nextPath } from '../src/lib/format';
import { isImageSource } from '../src/lib/image-source';
import { SPACE_ID_SLOT } from '../src/shell/html';

const answer = (status: number, error: string, headers: Record<string, string> = {}) => ({
  status,
  body: { error },
  headers: new Headers(headers),
});

describe('describeError', () => {
  it('says what happened in words a person can act on, from the SDK error of each status', () => {
    expect(
      describeError(new NotFoundError('404 space not found', answer(404, 'space not found')), 'the space'),
    ).toBe('Not found (space not found). The link may be mistyped, or the space no longer exists.');
    expect(describeError(new AuthenticationError('401 unknown key', answer(401, 'unknown key')))).toBe(
      'Your key does not open this space (unknown key). It may have been mistyped, or you left or were removed, or the space has closed.',
    );
    expect(describeError(new ConflictError('409 space is closed', answer(409, 'space is closed')))).toBe(
      'Not possible right now: space is closed.',
    );
    expect(describeError(new LockedError('423 artifact is locked', answer(423, 'artifact is locked')))).toBe(
      'Locked: artifact is locked.',
    );
    expect(describeError(new ServiceUnavailableError('503 down', answer(503, 'database unreachable')))).toBe(
      'The service failed (503): database unreachable. Try again in a moment.',
    );
  });

  it('says why a key stopped working when the server’s code says so, whatever the status', () => {
    const refused = (status: number, error: string, code: string) =>
      new (status === 409 ? ConflictError : AuthenticationError)(`${status} ${error}`, {
        ...answer(status, error),
        body: { error, code },
      });
    expect(describeError(refused(401, 'participant was removed', 'participant_removed'))).toBe(
      'The owner removed you from this space: your key no longer opens it.',
    );
    expect(describeError(refused(401, 'participant left', 'participant_left'))).toBe(
      'You left this space: your key no longer opens it. Open the invitation link again to rejoin.',
    );
    for (const status of [401, 409])
      expect(describeError(refused(status, 'space is closed', 'space_closed'), 'this invitation')).toBe(
        'This space was closed by its owner, for good: nothing in it can be read or sent any more.',
      );
    expect(describeError(refused(401, 'space is closed', 'space_expired'))).toBe(
      'This space has expired (it reached the end of its time), for good: nothing in it can be read or sent any more.',
    );
  });

  it('tells how long to wait after a 429, from Retry-After', () => {
    const limited = new RateLimitError('429 slow down', answer(429, 'slow down', { 'retry-after': '7' }));
    expect(describeError(limited)).toBe('Too many requests. Try again in 7 seconds.');
    expect(describeError(new RateLimitError('429 slow down', answer(429, 'slow down')))).toBe(
      'Too many requests. Try again in a moment.',
    );
  });

  it('tells a dropped connection from a failure of the service', () => {
    expect(describeError(new ConnectionError('fetch failed'))).toBe(
      'The service cannot be reached; check your connection and try again.',
    );
    expect(describeError(new TypeError('x is undefined'))).toBe('Something went wrong: x is undefined');
  });
});

describe('joinEnded', () => {
  const coded = (error: string, code?: string) => ({
    status: 404,
    body: { error, ...(code ? { code } : {}) },
    headers: new Headers(),
  });
  it('tells a refusal, a key another tab took and any other 404 apart, by code or (older servers) words', () => {
    const refused = 'join request refused: the owner turned it down';
    expect(joinEnded(new NotFoundError(`404 ${refused}`, coded(refused, 'join_refused')))).toMatch(
      /^The owner did not let you in\./,
    );
    expect(joinEnded(new NotFoundError(`404 ${refused}`, coded(refused)))).toMatch(
      /^The owner did not let you in\./,
    );
    const collected = 'pending join request not found: its key was already handed out';
    for (const error of [
      new NotFoundError(`404 ${collected}`, coded(collected, 'join_key_collected')),
      new NotFoundError(`404 ${collected}`, coded(collected)),
    ]) {
      const said = joinEnded(error);
      expect(said).toMatch(/another tab or window/);
      expect(said).not.toMatch(/owner did not let you in/);
    }
    const gone = joinEnded(
      new NotFoundError('404 space not found', coded('space not found', 'space_not_found')),
    );
    expect(gone).toBe(
      'You were not let in. Not found (space not found). The link may be mistyped, or this invitation no longer exists.',
    );
    expect(
      joinEnded(new ConflictError('409 space is closed', { ...coded('space is closed'), status: 409 })),
    ).toMatch(/^You were not let in\. Not possible right now/);
  });
});

describe('isImageSource', () => {
  it.each([
    ['https://example.com/cat.png', true],
    ['  https://example.com/cat.png  ', true],
    ['data:image/png;base64,iVBORw0KGgo=', true],
    ['data:image/webp;base64,UklGRg==', true],
    ['http://example.com/cat.png', false],
    ['javascript:alert(1)', false],
    ['data:image/svg+xml;base64,PHN2Zz4=', false],
    ['data:text/html;base64,PGI+', false],
    ['/avatar/x.svg', false],
    ['x', false],
  ])('%s → %s', (source, shown) => {
    expect(isImageSource(source)).toBe(shown);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, 'expired'],
    [45, '45 s left'],
    [600, '10 min left'],
    [7200, '2 h left'],
    [86400 * 3, '3 days left'],
  ])('%i s → %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });
});

describe('nextPath (/login?next=)', () => {
  it.each([
    ['?next=/link%3Fcode%3DBCDF-GHJK', '/link?code=BCDF-GHJK'],
    ['?next=/dashboard', '/dashboard'],
    ['?next=https://evil.example/', '/dashboard'],
    ['?next=//evil.example/', '/dashboard'],
    ['?next=/%5Cevil.example/', '/dashboard'],
    ['', '/dashboard'],
  ])('%s → %s', (search, path) => {
    expect(nextPath(search)).toBe(path);
  });
});

describe('withSpaceId', () => {
  const shell = `<main><div ${SPACE_ID_SLOT} id="page" hidden></div></main>`;

  it('writes the id into the slot, escaped', () => {
    expect(withSpaceId(shell, 'abc')).toBe('<main><div data-space-id="abc" id="page" hidden></div></main>');
    expect(withSpaceId(shell, '"><script>alert(1)</script>')).toBe(
      '<main><div data-space-id="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" id="page" hidden></div></main>',
    );
  });

  it('keeps replacement patterns as text', () => {
    expect(withSpaceId(shell, "$&$'$`")).toBe(
      '<main><div data-space-id="$&amp;$&#39;$`" id="page" hidden></div></main>',
    );
  });
});
