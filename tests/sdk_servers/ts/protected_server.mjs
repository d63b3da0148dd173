// A protected streamable HTTP MCP server on the TypeScript SDK's own auth support, on 127.0.0.1 only: the SDK's
// requireBearerAuth middleware (expectedResource and a required scope) and mcpAuthMetadataRouter (RFC 9728 and
// RFC 8414 metadata), the tokens verified with jose against the authorization server's JWKS (signature, issuer,
// audience, expiry). Stateless: a server and a transport per request, the SDK's own pattern.
// --bug garbage-500 plants the verifier that lets jose's own error through (not the SDK's InvalidTokenError):
// the middleware then answers a bad token with 500 instead of a 401 challenge.
// Usage: node protected_server.mjs --port PORT --issuer ISSUER_URL [--bug garbage-500]
import express from "express";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { z } from "zod";
import { serveStateless } from "./stateless.mjs";

const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const port = Number(arg("--port"));
const issuer = arg("--issuer").replace(/\/$/, "");
const resource = new URL(`http://127.0.0.1:${port}/mcp`);
const oauthMetadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
const throwsRaw = process.argv.includes("garbage-500");

const verifier = {
  async verifyAccessToken(token) {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer, audience: resource.href, algorithms: ["RS256"] }));
    } catch (error) {
      if (throwsRaw) throw error;
      const { InvalidTokenError } = await import("@modelcontextprotocol/sdk/server/auth/errors.js");
      throw new InvalidTokenError(`token refused: ${error.code ?? error.name}`);
    }
    return { token, clientId: String(payload.sub ?? "client"), scopes: String(payload.scope ?? "").split(" "),
             expiresAt: payload.exp, resource: new URL(String(payload.aud)) };
  },
};

function mcpServer() {
  const server = new McpServer({ name: "ts-sdk-protected-test-server", version: "0.1.0" });
  server.registerTool(
    "echo",
    { description: "Return the text unchanged.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const app = express();
app.use(express.json());
app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: resource, scopesSupported: ["mcp"] }));
app.post("/mcp", requireBearerAuth({ verifier, requiredScopes: ["mcp"], expectedResource: resource,
                                      resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource) }),
  async (req, res) => {
    await serveStateless(mcpServer, req, res, req.body);
  });
app.listen(port, "127.0.0.1", () => console.error(`ready ${resource.href}`));
