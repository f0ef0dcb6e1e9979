# prdigest: `prdigest serve` in a slim image, as an unprivileged user.
#   docker build -t prdigest .
#   docker run -p 8080:8080 prdigest        # the bundled example, offline: http://localhost:8080/
# The config is /etc/prdigest/prdigest.toml (the bundled example until you mount yours);
# secrets come only from the environment variables the config names. The example's
# snapshot is /usr/share/prdigest/snapshot.json; PRDIGEST_SNAPSHOT names the snapshot
# `serve` reads instead of GitHub (set it empty to read GitHub).
#
# The base image is pinned by tag. Pin it by digest too where you build
# (`docker buildx imagetools inspect python:3.11-slim-bookworm` prints it), as
# FROM python:3.11-slim-bookworm@sha256:<digest>.

FROM python:3.11-slim-bookworm AS build
WORKDIR /src
# Every dependency exactly as locked, each file checked against its hash
# (requirements.lock: `make lock`; tests/test_lock.py keeps it in step with pyproject.toml).
COPY requirements.lock ./
RUN pip wheel --no-cache-dir --require-hashes --no-deps --wheel-dir /wheels -r requirements.lock
COPY pyproject.toml README.md hatch_build.py ./
COPY bot ./bot
COPY adapters ./adapters
COPY templates ./templates
# The message catalogs are compiled here (hatch_build.py, with Babel in the build's own
# environment): the image carries .mo files and no Babel.
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PRDIGEST_SNAPSHOT=/usr/share/prdigest/snapshot.json
# uid and gid 10001: the Kubernetes manifests (deploy/kubernetes) run the pods as them.
RUN groupadd --system --gid 10001 prdigest && \
    useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin prdigest
COPY --from=build /wheels /wheels
# Only the wheels built above: no index, no resolution, nothing but what the lock names.
RUN pip install --no-index --no-deps /wheels/*.whl && rm -rf /wheels
COPY examples/prdigest.toml /etc/prdigest/prdigest.toml
COPY examples/snapshot.json /usr/share/prdigest/snapshot.json
USER prdigest
WORKDIR /tmp
EXPOSE 8080
# /readyz answers 503 when Redis is configured but unreachable; urlopen then raises.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=4)"]
ENTRYPOINT ["prdigest"]
CMD ["serve", "--config", "/etc/prdigest/prdigest.toml", "--host", "0.0.0.0", "--port", "8080"]
