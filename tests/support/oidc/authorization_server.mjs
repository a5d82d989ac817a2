// A real OAuth 2.1 / OpenID Connect authorization server for the auth tests: npm `oidc-provider`
// (the certified Node provider), on 127.0.0.1 only. Usage: node authorization_server.mjs PORT
// (run from the folder its node_modules is in: ./scripts/test installs it into .cache/oidc).
//
// What the tests need from it: open dynamic client registration for public clients (the MCP SDK
// registers with `application_type: native` and a loopback redirect URI), authorization code with
// PKCE (S256, required), RFC 8707 resource indicators issuing RS256 JWT access tokens whose `aud`
// is the MCP server's URL and whose `scope` holds the resource's scopes, and login + consent as
// plain HTML forms (devInteractions) that a test drives over HTTP instead of a browser.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { Provider, errors } from 'oidc-provider';
import { renderError, serve } from './serving.mjs';

const port = Number(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const RESOURCE_SCOPES = 'mcp:tools inventory:write';

const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
Object.assign(key, { kid: randomUUID(), alg: 'RS256', use: 'sig' });

function loopback(indicator) {
  const url = URL.parse(indicator);
  return !!url && url.protocol === 'http:' && ['127.0.0.1', 'localhost'].includes(url.hostname);
}

const provider = new Provider(issuer, {
  jwks: { keys: [key] },
  cookies: { keys: ['test-only-cookie-key'] },
  scopes: ['openid', 'offline_access'],
  // The SDK registers with the scopes it will ask for; resource scopes are not OpenID scopes, so the
  // registration's `scope` is dropped (any scope may then be requested, as for a step-up).
  extraClientMetadata: {
    properties: ['scope'],
    validator(ctx, name, value, metadata) {
      if (name === 'scope') metadata.scope = undefined;
    },
  },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    id_token_signed_response_alg: 'RS256',
  },
  responseTypes: ['code'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true, initialAccessToken: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        if (!loopback(indicator)) throw new errors.InvalidTarget();
        return {
          audience: indicator,
          scope: RESOURCE_SCOPES,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  renderError,
});

serve(provider, port, issuer);
