import type { PlanRules } from '../protocols.types';

/**
 * A plan in the shape Segment's UI exports (draft-04, `labels`, `id` paths on every node, `type`
 * arrays, `enum` with null), written for the tests from the shapes in docs/protocols.md.
 */
export const SEGMENT_UI_PLAN_RULES: PlanRules = {
  events: [
    {
      name: 'Order Completed',
      description: 'A customer paid',
      version: 1,
      rules: {
        $schema: 'http://json-schema.org/draft-04/schema#',
        type: 'object',
        labels: { team: 'checkout' },
        properties: {
          context: { id: '/properties/context' },
          traits: { id: '/properties/traits', type: 'object' },
          properties: {
            id: '/properties/properties',
            type: 'object',
            properties: {
              order_id: {
                id: '/properties/properties/properties/order_id',
                description: 'Our order number',
                type: 'string',
                pattern: '^ord_[0-9]+$',
              },
              revenue: {
                id: '/properties/properties/properties/revenue',
                type: 'number',
                minimum: 0,
                exclusiveMinimum: true,
              },
              coupon: { id: '/properties/properties/properties/coupon', type: ['string', 'null'] },
              currency: { id: '/properties/properties/properties/currency', enum: ['EUR', 'USD', null] },
              completed_at: {
                id: '/properties/properties/properties/completed_at',
                type: 'string',
                format: 'date-time',
              },
            },
            required: ['order_id', 'revenue'],
          },
        },
        required: ['properties'],
      },
    },
    {
      name: 'Product Viewed',
      version: 1,
      rules: {
        $schema: 'http://json-schema.org/draft-04/schema#',
        type: 'object',
        labels: {},
        properties: {
          context: { id: '/properties/context' },
          properties: {
            id: '/properties/properties',
            type: 'object',
            properties: {
              product_id: { id: '/properties/properties/properties/product_id', type: 'string' },
            },
            required: ['product_id'],
          },
        },
      },
    },
  ],
  identify: {
    $schema: 'http://json-schema.org/draft-04/schema#',
    type: 'object',
    labels: {},
    properties: {
      traits: {
        id: '/properties/traits',
        type: 'object',
        properties: {
          email: { id: '/properties/traits/properties/email', type: 'string', format: 'email' },
          plan: { id: '/properties/traits/properties/plan', enum: ['free', 'pro'] },
        },
        required: ['email'],
      },
    },
  },
  global: {
    $schema: 'http://json-schema.org/draft-04/schema#',
    type: 'object',
    labels: {},
    properties: {
      context: {
        id: '/properties/context',
        type: 'object',
        properties: { app: { id: '/properties/context/properties/app', type: 'object' } },
      },
    },
  },
  identify_traits: [],
  group_traits: [],
};
