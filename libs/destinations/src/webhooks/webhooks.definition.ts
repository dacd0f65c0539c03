/**
 * Webhooks: every message POSTed as JSON to a URL of the tenant's choosing (docs/webhooks.md).
 *
 * Tributary delivers server side only, so the sole component is CLOUD: listing WEB or IOS would
 * promise device-mode bundles that Tributary does not ship. Logos are empty strings: Tributary serves
 * no vendor artwork, and clients treat an empty logo as "none".
 */
import { defineSetting } from '../catalog/destination-setting.builder';
import type { DestinationDefinition } from '../destination-definition';
import { problemWithWebhookHeaders } from './webhook-settings.validator';
import { WebhooksDeliveryAdapter } from './webhooks.adapter';

const HTTP_URL_PATTERN = '^https?://';

export const webhooksDefinition: DestinationDefinition = {
  catalog: {
    slug: 'webhooks',
    displayName: 'Webhooks',
    description:
      'POST every message as JSON to a URL of your choice. With a shared secret, each request carries ' +
      'an X-Signature header: the hex HMAC-SHA1 of the body keyed by the secret.',
    website: 'https://segment.com/docs/connections/destinations/catalog/webhooks/',
    status: 'PUBLIC',
    logos: { logo: '', mark: '' },
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
    capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: true },
  },
  // A URL may carry `user:password@`, and headers carry API keys and tokens.
  secrets: { url: 'url-credentials', headers: 'map-values' },
  checkSetting(key, value) {
    if (key === 'headers' && value !== undefined && value !== null) return problemWithWebhookHeaders(value);
    return null;
  },
  // No gathering: one request per message, since a receiver written for Segment's webhooks expects a
  // single message body, and the signature then covers every byte it acts on.
  createAdapter: ({ egressGuard, options }) =>
    new WebhooksDeliveryAdapter({ ...options.webhooks, egressGuard }),
};
