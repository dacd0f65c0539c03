/**
 * The built-in destination catalog. Each entry needs a delivery adapter, so the list stays short.
 *
 * Tributary delivers server side only, so every entry's sole component is CLOUD: listing WEB or IOS
 * would promise device-mode bundles that Tributary does not ship. Logos are empty strings: Tributary
 * serves no vendor artwork, and clients treat an empty logo as "none".
 */
import { SCHEMA_NAME_PATTERN, refusedSchemaReason } from '../delivery/adapters/postgres/postgres-schema';
import type { CatalogDestinationDefinition } from './catalog-entry.types';
import { defineSetting } from './destination-setting.builder';

const HTTP_URL_PATTERN = '^https?://';
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

const noLogos = { logo: '', mark: '' } as const;

export const CATALOG_DESTINATIONS: readonly CatalogDestinationDefinition[] = [
  {
    slug: 'webhooks',
    displayName: 'Webhooks',
    description:
      'POST every message as JSON to a URL of your choice. With a shared secret, each request carries ' +
      'an X-Signature header: the hex HMAC-SHA1 of the body keyed by the secret.',
    website: 'https://segment.com/docs/connections/destinations/catalog/webhooks/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Raw Data', secondary: '', additional: [] },
    settings: [
      defineSetting('url', 'Webhook URL', 'string', {
        required: true,
        pattern: HTTP_URL_PATTERN,
        description: 'Where each message is POSTed.',
      }),
      defineSetting('headers', 'Headers', 'map', {
        description: 'Extra HTTP headers sent with every request, name to value.',
      }),
      defineSetting('shared_secret', 'Shared Secret', 'password', {
        description: 'Signs each request body so the receiver can check it came from Tributary.',
      }),
      // Off by default: receivers written for Segment check the signature of the body alone.
      defineSetting('signature_timestamp', 'Sign a Timestamp', 'boolean', {
        description:
          'With a shared secret: send X-Signature-Timestamp (Unix seconds) and sign "<timestamp>.<body>" ' +
          'instead of the body alone, so the receiver can refuse replayed requests.',
      }),
    ],
    // One request per message: a receiver written for Segment's webhooks expects a single message body.
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: false,
      destinationFiltersApply: true,
    },
  },
  {
    slug: 'postgres',
    displayName: 'PostgreSQL',
    description:
      'Insert every message as a row into PostgreSQL tables (one table per message type, plus one per ' +
      "track event) in the source's own schema, for SQL analysis of the raw data. Tributary writes only " +
      'to tables it created there.',
    website: 'https://www.postgresql.org/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Warehouses', secondary: '', additional: [] },
    settings: [
      defineSetting('connection_string', 'Connection String', 'password', {
        required: true,
        description:
          'A libpq connection URI, e.g. postgres://user:pass@host:5432/db. Stored encrypted. Socket paths ' +
          'and sslcert, sslkey and sslrootcert are not accepted.',
      }),
      // Empty by default: the adapter then writes to the source's own schema, named after its slug, as
      // Segment's warehouses do, rather than to `public`, which other applications of the database use.
      defineSetting('schema', 'Schema', 'string', {
        pattern: SCHEMA_NAME_PATTERN,
        refusedValueReason: refusedSchemaReason,
        description:
          "The schema that holds the tables; empty means the source's own schema, named after its slug " +
          '(web-app → web_app). System schemas (pg_*, information_schema) are refused.',
      }),
    ],
    // A warehouse: rows are inserted whatever their age, in batches, and Segment does not run
    // destination filters for warehouses (spec D7).
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: true,
      destinationFiltersApply: false,
    },
  },
  {
    slug: 'google-analytics',
    displayName: 'Google Analytics',
    description: 'Send pageviews and events to Universal Analytics through the Measurement Protocol.',
    website: 'https://marketingplatform.google.com/about/analytics/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Analytics', secondary: '', additional: [] },
    settings: [
      defineSetting('trackingId', 'Website Tracking ID', 'string', {
        required: true,
        // Universal Analytics (UA-123-1, and the short UA-123 older accounts show) or a GA4 stream (G-XXXX).
        pattern: '^((UA|YT|MO)-\\d+(-\\d+)?|G-[A-Z0-9]+)$',
        description: 'The property ID, UA-XXXXXXXX-X or G-XXXXXXX.',
      }),
      defineSetting('mobileTrackingId', 'Mobile Tracking ID', 'string', {
        pattern: '^((UA|YT|MO)-\\d+(-\\d+)?|G-[A-Z0-9]+)$',
        description: 'A separate property for messages from mobile sources; empty means use the website ID.',
      }),
      defineSetting('anonymizeIp', 'Anonymize IP Addresses', 'boolean'),
      defineSetting('sendUserId', 'Send User-ID to GA', 'boolean'),
      defineSetting('nonInteraction', 'Add the non-interaction flag to all events', 'boolean'),
      defineSetting('enhancedEcommerce', 'Enable Enhanced Ecommerce', 'boolean'),
      defineSetting('siteSpeedSampleRate', 'Site Speed Sample Rate', 'number', { defaultValue: 1 }),
      defineSetting('dimensions', 'Custom Dimensions', 'map', {
        description: 'Trait or property name to GA dimension, e.g. {"plan":"dimension1"}.',
      }),
      defineSetting('metrics', 'Custom Metrics', 'map', {
        description: 'Trait or property name to GA metric, e.g. {"score":"metric1"}.',
      }),
      defineSetting('classic', 'Use Classic Analytics on Your Site', 'boolean', { deprecated: true }),
    ],
    // The Measurement Protocol's queue time (qt) may not exceed four hours; older hits are dropped.
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: 4 * HOUR_MS,
      supportsBatching: true,
      destinationFiltersApply: true,
    },
  },
  {
    slug: 'mixpanel',
    displayName: 'Mixpanel',
    description: 'Send events and user profiles to Mixpanel product analytics.',
    website: 'https://mixpanel.com/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Analytics', secondary: '', additional: [] },
    settings: [
      defineSetting('token', 'Project Token', 'string', { required: true }),
      defineSetting('apiSecret', 'API Secret', 'password', {
        description: 'Needed to import events older than Mixpanel accepts on its track endpoint.',
      }),
      defineSetting('apiHost', 'API Host', 'select', {
        selectOptions: ['api.mixpanel.com', 'api-eu.mixpanel.com'],
        description: 'api-eu.mixpanel.com for projects with EU data residency.',
      }),
      defineSetting('people', 'Use Mixpanel People', 'boolean'),
      defineSetting('setAllTraitsByDefault', 'Set All Traits by Default', 'boolean', { defaultValue: true }),
      defineSetting('trackAllPages', 'Track All Pages to Mixpanel', 'boolean'),
      defineSetting('trackNamedPages', 'Track Named Pages to Mixpanel', 'boolean', { defaultValue: true }),
      defineSetting('superProperties', 'Super Properties', 'list'),
      defineSetting('propIncrements', 'Properties to increment in People', 'list'),
    ],
    // The track endpoint rejects events more than five days old.
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: 5 * DAY_MS,
      supportsBatching: true,
      destinationFiltersApply: true,
    },
  },
  {
    slug: 'amplitude',
    displayName: 'Amplitude',
    description: 'Send events and user properties to Amplitude product analytics.',
    website: 'https://amplitude.com/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Analytics', secondary: '', additional: [] },
    settings: [
      defineSetting('apiKey', 'API Key', 'string', { required: true }),
      defineSetting('secretKey', 'Secret Key', 'password'),
      defineSetting('endpoint', 'Data Residency', 'select', {
        selectOptions: ['north_america', 'europe'],
        description: 'europe sends to api.eu.amplitude.com.',
      }),
      defineSetting('trackAllPages', 'Track All Pages to Amplitude', 'boolean'),
      defineSetting('trackNamedPages', 'Track Named Pages to Amplitude', 'boolean', { defaultValue: true }),
      defineSetting('trackReferrer', 'Track Referrer to Amplitude', 'boolean'),
      defineSetting('groupTypeTrait', 'Group Type Trait', 'string'),
      defineSetting('groupValueTrait', 'Group Value Trait', 'string'),
    ],
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: true,
      destinationFiltersApply: true,
    },
  },
  {
    slug: 'slack',
    displayName: 'Slack',
    description: 'Post a message to a Slack channel for chosen events, through an incoming webhook.',
    website: 'https://slack.com/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Customer Success', secondary: '', additional: [] },
    settings: [
      defineSetting('incomingWebhookUrl', 'Incoming Webhook URL', 'string', {
        required: true,
        pattern: HTTP_URL_PATTERN,
      }),
      defineSetting('channels', 'Event Channels', 'map', {
        description: 'Event name to channel; events not listed go to the webhook default channel.',
      }),
      defineSetting('templates', 'Event Templates', 'map', {
        description: 'Event name to a message template such as "{{name}} signed up".',
      }),
      defineSetting('whitelist', 'Whitelisted Traits', 'list', {
        description: 'Traits included in the message of an identify call.',
      }),
      defineSetting('username', 'Username', 'string', { defaultValue: 'Tributary' }),
      defineSetting('messageColor', 'Message Color', 'color', {
        defaultValue: '#36a64f',
        pattern: '^#[0-9A-Fa-f]{6}$',
      }),
    ],
    // A chat message for an old event is still worth posting; the webhook takes one message per call.
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: false,
      destinationFiltersApply: true,
    },
  },
  {
    slug: 'segment',
    displayName: 'Segment',
    description:
      'Forward every message to a Segment-compatible tracking API: Segment itself or another Tributary.',
    website: 'https://segment.com/',
    status: 'PUBLIC',
    logos: noLogos,
    components: ['CLOUD'],
    categories: { primary: 'Raw Data', secondary: '', additional: [] },
    settings: [
      defineSetting('writeKey', 'Write Key', 'password', { required: true }),
      defineSetting('apiHost', 'API Host', 'string', {
        defaultValue: 'https://api.segment.io',
        pattern: HTTP_URL_PATTERN,
        description: 'Base URL of the tracking API; messages go to <apiHost>/v1/batch.',
      }),
    ],
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: true,
      destinationFiltersApply: true,
    },
  },
];
