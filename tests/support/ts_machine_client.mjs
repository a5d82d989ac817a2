// The official TypeScript MCP client (v2, @modelcontextprotocol/client) as a machine: an agent with its own
// key, or an agent acting for a user of an enterprise IdP, with no browser and no user at the MCP server's
// authorization server. For the agent identity end-to-end tests. Usage (from the folder its node_modules is
// in: ./scripts/test installs the client into .cache/ts-client; run with the harness's Node 22):
//   node ts_machine_client.mjs MODE CONFIG_JSON
//
// MODE:
// - cc: PrivateKeyJwtProvider (client_credentials, private_key_jwt with CONFIG.privateKey, a PKCS8 PEM)
//   through StreamableHTTPClientTransport: connect, list the tools, call CONFIG.tool, then CONFIG.deniedTool
//   (a tool needing a scope the client lacks; the transport is told to throw on insufficient_scope rather
//   than re-authorize, as the SDK advises for machine clients) and report how it was refused.
// - idjag: CrossAppAccessProvider (Cross-App Access, SEP-990): its assertion callback exchanges
//   CONFIG.idp.idToken at the enterprise IdP (discoverAndRequestJwtAuthGrant) for an ID-JAG, which the SDK
//   presents with the jwt-bearer grant, authenticating with the same private_key_jwt as cc
//   (`addClientAuthentication`); then as cc.
// - dpop: cc with `dpop()` returning one DpopSession (RFC 9449): the token is DPoP-bound and every MCP request
//   carries a proof. Then it builds proofs for the test to replay with the raw token: two valid ones, one for
//   another URL, one for another method, one without `ath`, one signed by another key.
//
// CONFIG.era picks the protocol revision: "2025-11-25" connects with `initialize` (the client's default,
// versionNegotiation 'legacy'); "2026-07-28" pins the modern era (`server/discover`, no fallback).
//
// Output: one JSON line, {"report": {...}} or {"error": "..."}.
import {
  Client,
  CrossAppAccessProvider,
  DpopSession,
  PrivateKeyJwtProvider,
  StreamableHTTPClientTransport,
  createPrivateKeyJwtAuth,
  discoverAndRequestJwtAuthGrant,
} from '@modelcontextprotocol/client';

const [mode, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const mcpUrl = new URL(config.url);
const say = (message) => process.stdout.write(JSON.stringify(message) + '\n');

// Every request the SDK makes outside the MCP endpoint (discovery, token, IdP), with the token requests'
// form and answer (assertions, secrets and tokens reduced to whether they were there), and for every MCP
// request its Authorization scheme, whether it had a DPoP proof, the status and the challenge.
const requests = [];
const tokenRequests = [];
const mcpRequests = [];
const hrefOf = (input) => (input instanceof Request ? input.url : String(input));
const recording = async (input, init) => {
  const href = hrefOf(input);
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  if (href === mcpUrl.href) {
    mcpRequests.push({
      method,
      scheme: (headers.get('authorization') ?? '').split(' ')[0],
      dpop: headers.has('dpop'),
    });
  } else {
    requests.push(`${method} ${href}`);
    if (method === 'POST' && init?.body !== undefined) {
      const form = new URLSearchParams(String(init.body));
      const entry = { url: href, dpop: headers.has('dpop'), basic: /^basic /i.test(headers.get('authorization') ?? '') };
      for (const [name, value] of form) {
        entry[name] = /assertion$|secret$|subject_token$/.test(name) ? Boolean(value) : value;
      }
      tokenRequests.push(entry);
    }
  }
  const response = await fetch(input, init);
  if (href === mcpUrl.href) {
    // What the server answered; its challenge as the front door delivers it (a REST API renames the
    // function's WWW-Authenticate to x-amzn-Remapped-WWW-Authenticate).
    const last = mcpRequests[mcpRequests.length - 1];
    last.status = response.status;
    last.challenge = response.headers.get('www-authenticate') ?? response.headers.get('x-amzn-remapped-www-authenticate');
  } else if (method === 'POST') {
    const answer = await response.clone().json().catch(() => undefined);
    const last = tokenRequests[tokenRequests.length - 1];
    if (last && last.url === href) {
      last.status = response.status;
      last.answer = answer && Object.fromEntries(
        Object.entries(answer).map(([key, value]) => [key, /token$|^assertion$/.test(key) ? Boolean(value) : value]),
      );
    }
  }
  return response;
};

const versionNegotiation = config.era === '2025-11-25' ? { mode: 'legacy' } : { mode: { pin: config.era } };

function ccProvider() {
  return new PrivateKeyJwtProvider({
    clientId: config.clientId,
    privateKey: config.privateKey,
    algorithm: config.algorithm ?? 'ES256',
    clientName: 'lambda-mcp e2e agent',
    scope: config.scope,
    expectedIssuer: config.issuer,
  });
}

const idjag = { grants: [], contexts: [] };

function idjagProvider() {
  const provider = new CrossAppAccessProvider({
    assertion: async (context) => {
      idjag.contexts.push({
        authorizationServerUrl: context.authorizationServerUrl,
        resourceUrl: context.resourceUrl,
        scope: context.scope,
      });
      const grant = await discoverAndRequestJwtAuthGrant({
        idpUrl: config.idp.url,
        audience: context.authorizationServerUrl,
        resource: context.resourceUrl,
        idToken: config.idp.idToken,
        clientId: config.idp.clientId,
        clientSecret: config.idp.clientSecret || undefined,
        scope: context.scope,
        fetchFn: context.fetchFn,
      });
      idjag.grants.push(grant);
      return grant.jwtAuthGrant;
    },
    clientId: config.clientId,
    clientSecret: undefined, // it authenticates with its key instead (below)
    clientName: 'lambda-mcp e2e cross-app agent',
    fetchFn: recording,
    expectedIssuer: config.issuer,
  });
  // The SDK calls `addClientAuthentication`, when the provider has one, instead of its own client
  // authentication: the same private_key_jwt as the client credentials provider.
  provider.addClientAuthentication = createPrivateKeyJwtAuth({
    issuer: config.clientId,
    subject: config.clientId,
    privateKey: config.privateKey,
    alg: config.algorithm ?? 'ES256',
  });
  return provider;
}

function textOf(result) {
  return result?.content?.[0]?.text;
}

function describe(error) {
  return {
    name: error?.constructor?.name ?? typeof error,
    message: String(error?.message ?? error),
    code: error?.code,
    requiredScope: error?.requiredScope ?? error?.scope,
    status: error?.data?.status ?? error?.status,
  };
}

async function main() {
  const dpop = mode === 'dpop' ? await DpopSession.create() : undefined;
  const provider = mode === 'idjag' ? idjagProvider() : ccProvider();
  if (dpop) provider.dpop = () => dpop; // before the transport is made: it checks for dpop() when built
  const transport = new StreamableHTTPClientTransport(mcpUrl, {
    authProvider: provider,
    fetch: recording,
    onInsufficientScope: 'throw',
  });
  const client = new Client({ name: 'lambda-mcp-e2e-machine', version: '1.0.0' }, { versionNegotiation });
  await client.connect(transport);
  const report = {
    mode,
    era: { asked: config.era, negotiated: client.getNegotiatedProtocolVersion(), kind: client.getProtocolEra() },
  };
  report.tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
  report.text = textOf(await client.callTool({ name: config.tool, arguments: config.arguments ?? {} }));
  if (config.deniedTool) {
    try {
      const result = await client.callTool({ name: config.deniedTool, arguments: config.deniedArguments ?? {} });
      report.denied = null;
      report.deniedResult = result;
    } catch (error) {
      report.denied = describe(error);
    }
  }
  const tokens = provider.tokens();
  report.tokens = {
    token_type: tokens?.token_type,
    scope: tokens?.scope,
    expires_in: tokens?.expires_in,
    refresh_token: Boolean(tokens?.refresh_token),
    access_token: tokens?.access_token,
  };
  if (mode === 'idjag') {
    report.idjag = {
      contexts: idjag.contexts,
      grants: idjag.grants.map((grant) => ({ jwt: grant.jwtAuthGrant, scope: grant.scope, expiresIn: grant.expiresIn })),
    };
  }
  if (dpop) {
    const accessToken = tokens.access_token;
    const other = await DpopSession.create();
    report.dpop = {
      thumbprint: dpop.thumbprint,
      proofs: {
        valid: await dpop.buildProof({ htm: 'POST', htu: mcpUrl, accessToken }),
        spare: await dpop.buildProof({ htm: 'POST', htu: mcpUrl, accessToken }),
        otherUrl: await dpop.buildProof({ htm: 'POST', htu: new URL(config.otherUrl ?? '/elsewhere', mcpUrl), accessToken }),
        otherMethod: await dpop.buildProof({ htm: 'GET', htu: mcpUrl, accessToken }),
        noAth: await dpop.buildProof({ htm: 'POST', htu: mcpUrl }),
        otherKey: await other.buildProof({ htm: 'POST', htu: mcpUrl, accessToken }),
      },
    };
  }
  report.requests = requests;
  report.tokenRequests = tokenRequests;
  report.mcpRequests = mcpRequests;
  await client.close();
  say({ report });
}

main().then(
  () => process.exit(0),
  (error) => {
    say({ error: String(error?.stack || error), requests, tokenRequests });
    process.exit(1);
  },
);
