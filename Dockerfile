# prdigest: `prdigest serve` in a slim image, as an unprivileged user.
#   docker build -t prdigest .
#   docker run -p 8080:8080 -e REDIS_URL=redis://redis:6379/0 prdigest
# The config is /etc/prdigest/prdigest.toml (the bundled example until you mount yours);
# secrets come only from the environment variables the config names.

FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY adapters ./adapters
COPY templates ./templates
# The project and every pinned dependency as wheels, so the final image needs no compiler.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin prdigest
COPY --from=build /wheels /wheels
RUN pip install --no-index --find-links=/wheels prdigest && rm -rf /wheels
COPY examples/prdigest.toml /etc/prdigest/prdigest.toml
USER prdigest
WORKDIR /tmp
EXPOSE 8080
# /healthz answers 503 when Redis is configured but unreachable; urlopen then raises.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
ENTRYPOINT ["prdigest"]
CMD ["serve", "--config", "/etc/prdigest/prdigest.toml", "--host", "0.0.0.0", "--port", "8080"]
