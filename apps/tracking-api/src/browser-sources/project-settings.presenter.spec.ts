import { presentProjectSettings, trackingApiAddress } from './project-settings.presenter';

describe('the settings document', () => {
  it('points at PUBLIC_BASE_URL when it is set, keeping a path prefix and its scheme', () => {
    const request = { protocol: 'http', host: 'internal:8080' };
    expect(trackingApiAddress('https://t.example.com', request)).toEqual({
      apiHost: 't.example.com/v1',
      protocol: 'https',
    });
    expect(trackingApiAddress('https://ex.com/seg/', request)).toEqual({
      apiHost: 'ex.com/seg/v1',
      protocol: 'https',
    });
    expect(trackingApiAddress('http://localhost:8080', request)).toEqual({
      apiHost: 'localhost:8080/v1',
      protocol: 'http',
    });
  });

  it('otherwise points at the scheme and host the request came with', () => {
    expect(trackingApiAddress(undefined, { protocol: 'https', host: 'collector.test' })).toEqual({
      apiHost: 'collector.test/v1',
      protocol: 'https',
    });
    expect(trackingApiAddress(undefined, { protocol: 'http', host: '127.0.0.1:3000' })).toEqual({
      apiHost: '127.0.0.1:3000/v1',
      protocol: 'http',
    });
  });

  it('never names Segment, never holds a null at the top level, and keeps library metrics off', () => {
    const settings = presentProjectSettings('WK', { apiHost: 't.example.com/v1', protocol: 'https' });
    expect(settings.integrations['Segment.io']).toMatchObject({
      apiKey: 'WK',
      apiHost: 't.example.com/v1',
      protocol: 'https',
    });
    expect(Object.keys(settings.integrations)).toEqual(['Segment.io']);
    expect(JSON.stringify(settings)).not.toMatch(/segment\.(io|com)/);
    expect(Object.values(settings).every((value) => value !== null)).toBe(true);
    expect(settings.metrics).toEqual({ sampleRate: 0 });
  });
});
