/** The dashboard's page until the dashboard issue builds the real one: no script, nothing inline to run. */
export const PLACEHOLDER_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Trellis</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1>Trellis host gateway</h1>
<p>The dashboard is not built yet. The gateway's API answers here: <a href="/projects">/projects</a> lists this machine's projects, and each project's own API is under <code>/p/&lt;id&gt;/</code>.</p>
<form method="post" action="/auth/login"><p>Signing in: <code>POST /auth/login</code> with <code>{"password": "..."}</code>.</p></form>
</body>
</html>
`;
