import { EventLogUnavailableError } from '../../event-log.port';
import { parsePubAck } from './pipelined-publisher';

describe('parsePubAck', () => {
  it.each([
    // Exactly as nats-server 2.x writes them (read off a real server).
    ['{"stream":"TRACKING", "seq":1}', { sequence: 1, duplicate: false }],
    ['{"stream":"TRACKING", "seq":1,"duplicate": true}', { sequence: 1, duplicate: true }],
    ['{"stream":"TRACKING","seq":9007199254740991}', { sequence: 9007199254740991, duplicate: false }],
    // Other shapes take the JSON.parse path and mean the same.
    ['{"stream":"TRACKING", "domain":"hub", "seq":7}', { sequence: 7, duplicate: false }],
    ['{"seq":3, "stream":"TRACKING", "duplicate":true}', { sequence: 3, duplicate: true }],
  ])('reads %s', (text, expected) => {
    expect(parsePubAck(text)).toEqual(expected);
  });

  it.each([
    [
      '{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"TRACKING","seq":0}',
    ],
    ['{"stream":"TRACKING"}'],
    ['not json'],
    [''],
  ])('refuses %s as not stored', (text) => {
    expect(parsePubAck(text)).toBeInstanceOf(EventLogUnavailableError);
  });
});
