import { describe, expect, it } from 'vitest';
import { backgroundFailure } from '../src/http/log-errors';
import { formatLogLine, textOutput } from '../src/http/request-log';

const at = new Date(2026, 10, 23, 14, 3, 7).getTime();
const request = (extra: object) =>
  JSON.stringify({
    level: 30,
    time: at,
    reqId: 'r1',
    req: { method: 'POST', url: '/hub/space', remoteAddress: '127.0.0.1' },
    res: { statusCode: 201 },
    responseTime: 4.26,
    msg: 'request completed',
    ...extra,
  });

describe('the text log format', () => {
  it('shows a request as time, status, method, URL and duration', () => {
    expect(formatLogLine(request({}), false)).toBe('14:03:07  201  POST /hub/space  4.3 ms');
    expect(formatLogLine(request({ responseTime: 1234.5 }), false)).toBe(
      '14:03:07  201  POST /hub/space  1235 ms',
    );
  });

  it('says when the client went away first (an event stream, usually)', () => {
    const line = request({
      msg: 'request aborted',
      req: { method: 'GET', url: '/hub/space/s/messages/stream?key=[redacted]' },
      responseTime: 15000,
      res: { statusCode: 200 },
    });
    expect(formatLogLine(line, false)).toBe(
      '14:03:07  200  GET /hub/space/s/messages/stream?key=[redacted]  15000 ms (client went away)',
    );
    expect(formatLogLine(request({ msg: 'request aborted', res: {} }), false)).toContain('  ---  POST');
  });

  it('shows other lines with their level and error', () => {
    const warn = JSON.stringify({
      level: 40,
      time: at,
      msg: 'database unavailable',
      err: { message: 'ECONNREFUSED' },
    });
    expect(formatLogLine(warn, false)).toBe('14:03:07  WARN  database unavailable: ECONNREFUSED');
    expect(formatLogLine(JSON.stringify({ level: 30, time: at, msg: 'ready' }), false)).toBe(
      '14:03:07  INFO  ready',
    );
    expect(formatLogLine('not json\n', false)).toBe('not json');
  });

  it('colours the status only when asked', () => {
    expect(formatLogLine(request({ res: { statusCode: 500 } }), true)).toContain('\u001b[31m500\u001b[39m');
    expect(formatLogLine(request({ res: { statusCode: 404 } }), true)).toContain('\u001b[33m404\u001b[39m');
    expect(formatLogLine(request({}), true)).toContain('\u001b[32m201\u001b[39m');
    expect(formatLogLine(request({}), false)).not.toContain('\u001b[');
  });

  it('writes every line of a chunk', () => {
    const written: string[] = [];
    const out = textOutput({ write: (text) => written.push(text) }, false);
    out.write(`${request({})}\n${request({ res: { statusCode: 204 } })}\n`);
    expect(written).toEqual([
      '14:03:07  201  POST /hub/space  4.3 ms\n',
      '14:03:07  204  POST /hub/space  4.3 ms\n',
    ]);
  });
});

describe('a background task’s failure', () => {
  it('is a warning when the database is away (a restart heals it), an error otherwise', () => {
    const logged: [string, string][] = [];
    const log = {
      warn: (_fields: object, message: string) => void logged.push(['warn', message]),
      error: (_fields: object, message: string) => void logged.push(['error', message]),
    };
    const failed = backgroundFailure(log, 'webhooks');
    // As postgres.js fails a query of a connection the restart reset, and as the server starting up refuses one.
    failed(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'delivering webhooks');
    failed(
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      'delivering webhooks',
    );
    failed(new TypeError('x is undefined'), 'delivering webhooks');
    expect(logged).toEqual([
      ['warn', 'webhooks: delivering webhooks'],
      ['warn', 'webhooks: delivering webhooks'],
      ['error', 'webhooks: delivering webhooks'],
    ]);
  });
});
