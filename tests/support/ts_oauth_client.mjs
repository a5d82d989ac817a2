// The official TypeScript MCP SDK's client signing in to an MCP server through its OAuth support, for
// the authorization facade's end-to-end tests. Usage (from the folder its node_modules is in:
// ./scripts/test installs the SDK into .cache/ts-sdk; run with the harness's Node 22):
//   node ts_oauth_client.mjs MCP_URL REDIRECT_URI TOOL [CLIENT_METADATA_URL]
//
// With CLIENT_METADATA_URL the SDK uses it as its client id (a client ID metadata document, CIMD) when
// the authorization server supports them; without it, it registers (DCR).
//
// It talks to the test over JSON lines: it prints {"authorize": URL} when the SDK sends the user to
// the authorization server, and reads one line back (the redirect the user's browser reached: the
// redirect URI with `code` and `state`). Then it connects, calls TOOL, makes the server reject its
// access token (the stored one is replaced, as if it had expired), so the SDK refreshes with its
// refresh token, and calls TOOL again. Last line: {"done": {...}} with what the test checks, among them
// every request the SDK made outside the MCP endpoint (discovery, registration, token).
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [mcpUrl, redirectUri, tool, clientMetadataUrl] = process.argv.slice(2);
const requests = [];
const recording = (url, init) => {
  const href = url instanceof Request ? url.url : String(url);
  if (href !== mcpUrl) requests.push(`${init?.method ?? 'GET'} ${href}`);
  return fetch(url, init);
};
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (message) => process.stdout.write(JSON.stringify(message) + '\n');

class TestProvider {
  constructor() {
    this.saved = { client: undefined, tokens: undefined, verifier: undefined };
    this.expectedState = randomBytes(16).toString('hex');
    this.authorizations = [];
    this.refreshes = 0;
  }
  get redirectUrl() { return redirectUri; }
  get clientMetadataUrl() { return clientMetadataUrl || undefined; }
  get clientMetadata() {
    return {
      client_name: 'lambda-mcp e2e typescript',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() { return this.expectedState; }
  clientInformation() { return this.saved.client; }
  saveClientInformation(info) { this.saved.client = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) {
    if (this.saved.tokens?.refresh_token) this.refreshes += 1;
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) { this.authorizations.push(url.href); }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  codeVerifier() { return this.saved.verifier; }
}

async function connected(provider) {
  const client = new Client({ name: 'lambda-mcp-e2e-ts', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: recording });
  await client.connect(transport);
  return client;
}

async function main() {
  const provider = new TestProvider();
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: recording });
  try {
    await new Client({ name: 'lambda-mcp-e2e-ts', version: '1.0.0' }).connect(first);
    throw new Error('the server accepted a client without a token');
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  if (provider.authorizations.length !== 1) throw new Error(`authorizations: ${provider.authorizations}`);
  say({ authorize: provider.authorizations[0] });
  const reached = new URL((await lines.next()).value);
  if (reached.searchParams.get('error')) throw new Error(`authorization refused: ${reached.search}`);
  if (reached.searchParams.get('state') !== provider.expectedState) throw new Error(`state mismatch: ${reached.search}`);
  await first.finishAuth(reached.searchParams.get('code'));
  const issued = provider.saved.tokens;

  const client = await connected(provider);
  const before = await client.callTool({ name: tool, arguments: {} });
  // The access token stops working (as when it expires): the next request gets a 401 and the SDK
  // refreshes with the refresh token instead of sending the user through authorization again.
  provider.saved.tokens = { ...provider.saved.tokens, access_token: 'expired.' + issued.access_token.slice(8) };
  const after = await client.callTool({ name: tool, arguments: {} });
  await client.close();
  say({
    done: {
      client_id: provider.saved.client.client_id,
      authorizations: provider.authorizations.length,
      requests,
      refreshes: provider.refreshes,
      issued: {
        access_token: issued.access_token,
        refresh_token: issued.refresh_token,
        issuer: issued.issuer,
        keys: Object.keys(issued),
      },
      refreshed: { access_token: provider.saved.tokens.access_token, refresh_token: provider.saved.tokens.refresh_token },
      before: before.content[0].text,
      after: after.content[0].text,
    },
  });
}

main().then(
  () => process.exit(0),
  (error) => {
    say({ error: String(error?.stack || error) });
    process.exit(1);
  },
);
