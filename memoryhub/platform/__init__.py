"""What the hub stands on and every layer may use: the embedded PostgreSQL it starts
when no DATABASE_URL is given (and the Django database backend that starts it), and
the request id carried into logs by requests and background tasks alike. Nothing here
imports a domain app."""
