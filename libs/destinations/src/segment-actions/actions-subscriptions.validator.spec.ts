import { problemWithDeliverySetting } from '../delivery/delivery-settings';
import { findActionsDestination, listActionsDestinations } from './actions-catalog.entries';
import { problemWithActionsSubscriptions } from './actions-subscriptions.validator';

const amplitude = findActionsDestination('actions-amplitude')!;
const logEvent = amplitude.presets.find((preset) => preset.partnerAction === 'logEventV2')!;

describe('problemWithActionsSubscriptions', () => {
  it("accepts every catalog entry's presets (the default of its subscriptions setting)", () => {
    const problems = listActionsDestinations()
      .map((destination) => [
        destination.slug,
        problemWithActionsSubscriptions(destination, destination.presets),
      ])
      .filter(([, problem]) => problem !== null);
    expect(problems).toEqual([]);
  });

  it('accepts an edited subscription and upper-case keywords', () => {
    expect(
      problemWithActionsSubscriptions(amplitude, [
        {
          ...logEvent,
          subscribe: 'type = "track" AND event = "Signed Up"',
          mapping: { ...logEvent.mapping, event_type: 'Signup' },
        },
      ]),
    ).toBeNull();
  });

  it.each([
    ['not a list', { subscribe: 'type = "track"' }, /must be a list/],
    ['an entry that is not an object', ['x'], /\[0\]: must be an object/],
    ['an unknown key', [{ ...logEvent, extra: 1 }], /unknown key "extra"/],
    [
      'FQL that Segment parses but is incomplete',
      [{ ...logEvent, subscribe: 'type = ' }],
      /\[0\]\.subscribe: not valid FQL/,
    ],
    [
      'FQL that does not parse',
      [{ ...logEvent, subscribe: 'type = "track" and (' }],
      /\[0\]\.subscribe: not valid FQL/,
    ],
    ['an empty subscribe', [{ ...logEvent, subscribe: '' }], /subscribe: must be a non-empty FQL string/],
    [
      'an unknown action',
      [{ ...logEvent, partnerAction: 'sendFax' }],
      /"sendFax" is not an action of actions-amplitude; actions: .*logEventV2/,
    ],
    [
      'an unknown field',
      [{ ...logEvent, mapping: { ...logEvent.mapping, favourite_colour: 'blue' } }],
      /"favourite_colour" is not a field of logEventV2/,
    ],
    [
      'a literal of the wrong type',
      [{ ...logEvent, mapping: { ...logEvent.mapping, price: 'cheap' } }],
      /mapping\.price: must be a number/,
    ],
    ['too many subscriptions', Array.from({ length: 51 }, () => logEvent), /more than the 50 allowed/],
  ])('refuses %s', (_name, value, expected) => {
    expect(problemWithActionsSubscriptions(amplitude, value)).toMatch(expected);
  });

  it('refuses a mapping that leaves out a required field without a default, and accepts one with a default', () => {
    expect(problemWithActionsSubscriptions(amplitude, [{ ...logEvent, mapping: {} }])).toBeNull();
    const [destination, action, field] = listActionsDestinations().flatMap((candidate) =>
      Object.entries(candidate.actions).flatMap(([name, definition]) =>
        Object.entries(definition.fields)
          .filter(([, data]) => data.required && data.default === undefined)
          .map(([fieldName]) => [candidate, name, fieldName] as const),
      ),
    )[0]!;
    expect(
      problemWithActionsSubscriptions(destination, [
        { subscribe: 'type = "track"', partnerAction: action, mapping: {} },
      ]),
    ).toBe(`[0].mapping: the required field "${field}" of ${action} is not mapped`);
  });

  it('is what the Config API asks through problemWithDeliverySetting', () => {
    expect(
      problemWithDeliverySetting('actions-amplitude', 'subscriptions', [
        { ...logEvent, partnerAction: 'nope' },
      ]),
    ).toMatch(/^setting "subscriptions"\[0\]\.partnerAction: "nope" is not an action/);
    expect(problemWithDeliverySetting('actions-amplitude', 'subscriptions', amplitude.presets)).toBeNull();
    expect(problemWithDeliverySetting('actions-amplitude', 'apiKey', 'k')).toBeNull();
  });
});
