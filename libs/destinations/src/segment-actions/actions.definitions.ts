/**
 * One definition per generated Actions entry: Segment's slug and display name, the authentication
 * fields as settings (secrets as `password`), and a `subscriptions` setting (type `mixed`) whose default
 * is the destination's automatic presets. Every one delivers through the Actions lane, shared by all
 * of a registry's Actions adapters.
 */
import type { DestinationSettingDefinition, JsonValue } from '../catalog/catalog-entry.types';
import { defineSetting } from '../catalog/destination-setting.builder';
import type { DestinationDefinition } from '../destination-definition';
import { listActionsDestinations, SUBSCRIPTIONS_SETTING } from './actions-catalog.entries';
import type { ActionsDestinationData } from './actions-catalog.types';
import { ActionsLane } from './actions-lane';
import { problemWithActionsSubscriptions } from './actions-subscriptions.validator';

/** The key under which a registry keeps the lane its Actions adapters share. */
const ACTIONS_LANE = 'segment-actions lane';

function actionsDefinition(destination: ActionsDestinationData): DestinationDefinition {
  const settings: DestinationSettingDefinition[] = destination.settings.map((setting) =>
    defineSetting(setting.key, setting.label, setting.type, {
      required: setting.required,
      ...(setting.default !== undefined && setting.default !== null && { defaultValue: setting.default }),
      ...(setting.choices !== undefined && { selectOptions: setting.choices }),
      ...(setting.description !== undefined && { description: setting.description }),
    }),
  );
  settings.push(
    defineSetting(SUBSCRIPTIONS_SETTING, 'Subscriptions', 'mixed', {
      defaultValue: destination.presets as unknown as JsonValue,
      description:
        'Which messages run which action: a list of {subscribe (FQL), partnerAction, mapping}. ' +
        "Defaults to the destination's presets.",
    }),
  );
  return {
    catalog: {
      slug: destination.slug,
      displayName: destination.name,
      description: destination.description,
      website: `https://segment.com/docs/connections/destinations/catalog/${destination.slug}/`,
      status: 'PUBLIC',
      logos: { logo: '', mark: '' },
      components: ['CLOUD'],
      categories: { primary: 'Actions', secondary: '', additional: [] },
      settings,
      capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: true },
    },
    secrets: { [SUBSCRIPTIONS_SETTING]: 'subscription-headers' },
    checkSetting(key, value) {
      if (key !== SUBSCRIPTIONS_SETTING) return null;
      const problem = problemWithActionsSubscriptions(destination, value);
      return problem === null
        ? null
        : `setting "subscriptions"${problem.startsWith('[') ? '' : ' '}${problem}`;
    },
    // No gathering: one message per call. A subscription with `enable_batching` still runs through its
    // action's `performBatch` (`batch` in the data), with the messages of that call.
    createAdapter: ({ egressGuard, options, shared }) =>
      shared(ACTIONS_LANE, () => new ActionsLane({ ...options.segmentActions, egressGuard })).deliveryAdapter(
        destination,
      ),
  };
}

export const ACTIONS_DEFINITIONS: readonly DestinationDefinition[] =
  listActionsDestinations().map(actionsDefinition);
