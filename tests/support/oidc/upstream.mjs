// The upstream identity provider of the authorization facade's end-to-end tests: npm `oidc-provider`
// on 127.0.0.1 with NO registration endpoint, like Cognito, Entra ID or Google. One confidential client
// is pre-registered for the facade, the way the template registers a Cognito app client.
//
// Usage (from the folder its node_modules is in: ./scripts/test installs it into .cache/oidc):
//   node upstream.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI [REDIRECT_URI...]
// UPSTREAM_AUTH_METHOD picks the client's token endpoint authentication (client_secret_basic unless set).
// UPSTREAM_ACCESS_TTL sets how many seconds its access tokens live (oidc-provider's `ttl.AccessToken`; an
// hour unless set), for tests that outlive one.
//
// What it offers: authorization code with PKCE (S256, required), OpenID Connect ID tokens (RS256, the
// subject is the login name), refresh tokens, and a login page (devInteractions: any login and password
// are accepted) that a test submits over HTTP or in a browser. `POST /test/disable` with a form `sub=NAME`
// disables that account, as an administrator would: its refresh tokens stop working (`invalid_grant`). The pre-registered client is first party:
// its grant is created at login, so there is no upstream consent screen (as with Cognito's managed login).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { Provider } from 'oidc-provider';
import { renderError, serve } from './serving.mjs';

const [portArg, clientId, clientSecret, ...redirectUris] = process.argv.slice(2);
if (!portArg || !clientId || !clientSecret || redirectUris.length === 0) {
  console.error('usage: node upstream.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI [REDIRECT_URI...]');
  process.exit(2);
}
const port = Number(portArg);
const accessTtl = process.env.UPSTREAM_ACCESS_TTL ? Number(process.env.UPSTREAM_ACCESS_TTL) : undefined;
if (accessTtl !== undefined && !(Number.isSafeInteger(accessTtl) && accessTtl > 0)) {
  console.error('UPSTREAM_ACCESS_TTL must be a whole number of seconds above 0');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;

const disabled = new Set();

const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
Object.assign(key, { kid: randomUUID(), alg: 'RS256', use: 'sig' });

const provider = new Provider(issuer, {
  jwks: { keys: [key] },
  cookies: { keys: ['upstream-test-only-cookie-key'] },
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: process.env.UPSTREAM_AUTH_METHOD || 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
  ],
  // The facade may ask for the MCP resource's scopes as well as OpenID's.
  scopes: ['openid', 'offline_access', 'email', 'profile', 'mcp:tools', 'inventory:write'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  findAccount: async (ctx, sub) =>
    disabled.has(sub)
      ? undefined
      : {
          accountId: sub,
          claims: async () => ({ sub, email: `${sub}@example.test`, email_verified: true, name: sub }),
        },
  responseTypes: ['code'],
  // Merged into oidc-provider's defaults: the other artifacts keep theirs, and so does AccessToken when unset.
  ttl: { AccessToken: accessTtl },
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: false },
    revocation: { enabled: true },
  },
  // First party: a grant for what the facade asked, made at login instead of a consent screen.
  loadExistingGrant: async (ctx) => {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    if (!ctx.oidc.session.accountId) return undefined;
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(ctx.oidc.params.scope || 'openid');
    await grant.save();
    return grant;
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  renderError,
});

provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/test/disable') {
    const body = await new Promise((resolve) => {
      let text = '';
      ctx.req.on('data', (chunk) => (text += chunk));
      ctx.req.on('end', () => resolve(text));
    });
    disabled.add(new URLSearchParams(body).get('sub'));
    ctx.status = 204;
    return;
  }
  await next();
});

serve(provider, port, issuer);
