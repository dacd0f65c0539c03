import { decideIntegrations } from './integrations.decider';

describe('decideIntegrations', () => {
  const enabled = (integrations: Record<string, unknown> | undefined, name = 'Mixpanel') =>
    decideIntegrations(integrations, name).enabled;

  it('enables every destination by default', () => {
    expect(enabled({})).toBe(true);
    expect(enabled(undefined)).toBe(true);
    expect(enabled({ 'Google Analytics': false })).toBe(true);
  });

  it('All false plus one destination true enables only that one', () => {
    const integrations = { All: false, Mixpanel: true };
    expect(enabled(integrations, 'Mixpanel')).toBe(true);
    expect(enabled(integrations, 'Amplitude')).toBe(false);
    expect(enabled(integrations, 'Webhooks')).toBe(false);
  });

  it('accepts the lowercase spelling all (Python) as well as All (Ruby)', () => {
    expect(enabled({ all: false }, 'Mixpanel')).toBe(false);
    expect(enabled({ all: false, Mixpanel: true }, 'Mixpanel')).toBe(true);
    expect(enabled({ all: false, Mixpanel: true }, 'Amplitude')).toBe(false);
  });

  it('either All or all being false is enough', () => {
    expect(enabled({ All: true, all: false })).toBe(false);
    expect(enabled({ All: false, all: true })).toBe(false);
  });

  it('All true changes nothing; a destination set false is still off', () => {
    expect(enabled({ All: true })).toBe(true);
    expect(enabled({ All: true, Mixpanel: false })).toBe(false);
  });

  it('a destination set to false is disabled, the others are not', () => {
    const integrations = { Mixpanel: false };
    expect(enabled(integrations, 'Mixpanel')).toBe(false);
    expect(enabled(integrations, 'Amplitude')).toBe(true);
  });

  it('keys are case sensitive and match the published display name exactly', () => {
    expect(enabled({ mixpanel: false }, 'Mixpanel')).toBe(true);
    expect(enabled({ MIXPANEL: false }, 'Mixpanel')).toBe(true);
    expect(enabled({ All: false, mixpanel: true }, 'Mixpanel')).toBe(false);
    expect(enabled({ All: false, 'Google Analytics': true }, 'Google Analytics')).toBe(true);
    expect(enabled({ All: false, GoogleAnalytics: true }, 'Google Analytics')).toBe(false);
    expect(enabled({ ALL: false }, 'Mixpanel')).toBe(true);
  });

  it('an object value counts as true (destination-specific options)', () => {
    expect(enabled({ All: false, 'Google Analytics': { clientId: '123.456' } }, 'Google Analytics')).toBe(
      true,
    );
    expect(enabled({ All: false, Mixpanel: {} }, 'Mixpanel')).toBe(true);
  });

  it('values that are neither a boolean nor an object decide nothing', () => {
    expect(enabled({ Mixpanel: 'false' })).toBe(true);
    expect(enabled({ Mixpanel: null })).toBe(true);
    expect(enabled({ Mixpanel: 0 })).toBe(true);
    expect(enabled({ All: false, Mixpanel: 'true' })).toBe(false);
    expect(enabled({ All: false, Mixpanel: 1 })).toBe(false);
    expect(enabled({ All: false, Mixpanel: ['x'] })).toBe(false);
    expect(enabled({ All: 'false' })).toBe(true);
    expect(enabled({ All: null })).toBe(true);
  });

  it('does not read inherited keys', () => {
    expect(enabled({}, 'constructor')).toBe(true);
    expect(enabled({ All: false }, 'toString')).toBe(false);
  });

  it('says why a destination is off', () => {
    expect(decideIntegrations({ Mixpanel: false }, 'Mixpanel')).toEqual({
      enabled: false,
      detail: 'integrations["Mixpanel"] is false',
    });
    expect(decideIntegrations({ all: false }, 'Mixpanel')).toEqual({
      enabled: false,
      detail: 'integrations.all is false and "Mixpanel" is not set to true',
    });
  });
});
