# Moat on Debian 12, built by the same script `make build` uses. Run it with
# docker-compose.yml (host networking, configuration mounted at
# /etc/moat/moat.conf).
FROM debian:12

ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /opt/moat
COPY . .
# scripts/install-deps.sh installs the Debian packages, rebuilds libsrtp2 with
# OpenSSL and prepares the test venv (curl, used by the healthcheck, is one of
# its packages); then the release build `make build` makes.
RUN bash scripts/install-deps.sh \
    && PKG_CONFIG_PATH=/opt/moat/.deps/libsrtp/lib/pkgconfig \
       meson setup build --buildtype=release -Db_ndebug=true \
    && ninja -C build \
    && useradd --system --uid 1000 --home-dir /var/lib/moat --create-home moat \
    && mkdir -p /var/lib/moat/recordings \
    && chown -R moat:moat /var/lib/moat \
    && rm -rf /var/lib/apt/lists/*

USER moat
EXPOSE 8088/tcp 20000-20063/udp
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD curl -fsS "http://127.0.0.1:${MOAT_HTTP_PORT:-8088}/healthz" || exit 1
ENTRYPOINT ["/opt/moat/build/gateway/moat"]
CMD ["--config", "/etc/moat/moat.conf"]
