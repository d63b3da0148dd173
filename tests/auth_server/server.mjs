// A real OAuth 2 authorization server for the protected-server tests: oauth2-mock-server on 127.0.0.1.
// Usage: node server.mjs PORT TOKEN_SECONDS. Client-credentials tokens are RS256 JWTs whose audience is the
// RFC 8707 `resource` the client asked for, living TOKEN_SECONDS; it prints "ready URL" once it listens.
import { OAuth2Server } from "oauth2-mock-server";

const port = Number(process.argv[2] ?? 0);
const lifetime = Number(process.argv[3] ?? 3600);
const server = new OAuth2Server();
await server.issuer.keys.generate("RS256");
server.service.on("beforeTokenSigning", (token, req) => {
  const now = Math.floor(Date.now() / 1000);
  token.payload.exp = now + lifetime;
  const resource = req.body?.resource;
  if (typeof resource === "string") token.payload.aud = resource;
  token.payload.sub = req.body?.client_id ?? "client";
});
server.service.on("beforeResponse", (response) => {
  if (response.body && "expires_in" in response.body) {
    response.body.expires_in = lifetime;
    // Each token issued, for the tests to count the renewals and to look for it in what mcpfuzz wrote.
    process.stdout.write(`issued ${response.body.access_token}\n`);
  }
});
await server.start(port, "127.0.0.1");
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
process.stdout.write(`ready ${server.issuer.url}\n`);
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.stop().then(() => process.exit(0)));
