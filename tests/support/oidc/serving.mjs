// What the test authorization servers share: errors as JSON, and serving on 127.0.0.1 until SIGTERM
// (a READY line on stdout once listening, for tests/support to wait on).

export async function renderError(ctx, out) {
  ctx.type = 'json';
  ctx.body = out;
}

export function serve(provider, port, issuer) {
  const server = provider.listen(port, '127.0.0.1', () => console.log(`READY ${issuer}`));
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
