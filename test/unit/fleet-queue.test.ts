/**
 * The `--queue` URL forms of fleet/queue.ts (the runner and the worker against a real Redis are in
 * test/e2e/fleet-queue.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { connectionOf, shownUrl } from '../../src/fleet/queue.js';
import { UsageError } from '../../src/errors.js';

describe('connectionOf', () => {
  it('redis:// with host, port, database and credentials; BullMQ needs maxRetriesPerRequest null', () => {
    expect(connectionOf('redis://127.0.0.1:6380')).toEqual({ host: '127.0.0.1', port: 6380, db: 0, maxRetriesPerRequest: null });
    expect(connectionOf('redis://queue-host')).toEqual({ host: 'queue-host', port: 6379, db: 0, maxRetriesPerRequest: null });
    expect(connectionOf('redis://fleet:s%40cret@queue-host:7000/3')).toEqual({ host: 'queue-host', port: 7000, db: 3, username: 'fleet', password: 's@cret', maxRetriesPerRequest: null });
    expect(connectionOf('rediss://queue-host:6380')).toMatchObject({ host: 'queue-host', port: 6380, tls: {} });
  });

  it('a unix socket: redis+unix:///path and unix:///path, ?db=N', () => {
    expect(connectionOf('redis+unix:///run/redis/redis.sock')).toEqual({ path: '/run/redis/redis.sock', db: 0, maxRetriesPerRequest: null });
    expect(connectionOf('unix:///tmp/r.sock?db=2')).toEqual({ path: '/tmp/r.sock', db: 2, maxRetriesPerRequest: null });
  });

  it('anything else is a UsageError naming the URL', () => {
    for (const bad of ['http://queue-host', 'queue-host:6379', 'redis://h/x', 'redis+unix://']) {
      expect(() => connectionOf(bad), bad).toThrow(UsageError);
    }
    expect(() => connectionOf('http://queue-host')).toThrow(/--queue http:\/\/queue-host/);
  });
});

describe('shownUrl', () => {
  it('hides the password, keeps the rest', () => {
    expect(shownUrl('redis://fleet:s3cret@queue-host:7000/3')).toBe('redis://fleet:***@queue-host:7000/3');
    expect(shownUrl('redis://queue-host:6379')).toBe('redis://queue-host:6379');
  });
});
