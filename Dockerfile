# Moat's container image, multi-stage (make image builds it, make
# test-image runs it):
#   build-deps  compilers and -dev packages, then libsrtp2 (OpenSSL) and the
#               patched usrsctp built by the same scripts as `make build`
#               (only those scripts are copied, so a source change reuses
#               this layer); fails when usrsctp lacks Moat's patch marker
#   build       the release build and `meson install --tags runtime` (and
#               --tags flood) into staging folders
#   gateway     Debian 12 with the runtime libraries only, the gateway, its
#               plugins, the pages and /etc/moat/moat.conf; runs as the
#               system user moat (uid/gid 999)
#   opusparse   the one GStreamer element the recorder takes from plugins-bad
#   flood       the gateway image plus moat-flood (--target flood); the
#               default image does not contain it
# BASE: debian:12 from a registry, or a local one made by debootstrap
# (scripts/make-image.sh) when no registry is reachable.
ARG BASE=debian:12

FROM ${BASE} AS build-deps
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends \
       build-essential pkg-config meson ninja-build clang llvm python3 ca-certificates \
       libssl-dev libglib2.0-dev libnice-dev libsoup-3.0-dev libjansson-dev \
       libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libopus-dev zlib1g-dev \
       libbpf-dev bpftool dpkg-dev autoconf automake libtool patch
WORKDIR /src
COPY scripts/build-libsrtp.sh scripts/build-usrsctp.sh scripts/build-libsoup.sh scripts/
COPY scripts/lib/ scripts/lib/
COPY scripts/patches/ scripts/patches/
RUN bash scripts/build-libsrtp.sh && bash scripts/build-usrsctp.sh && bash scripts/build-libsoup.sh \
    && grep -q '^moat_patches=.' .deps/usrsctp/lib/pkgconfig/usrsctp.pc \
    || { echo "usrsctp was built without Moat's patches (no moat_patches marker)" >&2; exit 1; }

FROM build-deps AS build
COPY . .
ENV PKG_CONFIG_PATH=/src/.deps/libsrtp/lib/pkgconfig:/src/.deps/usrsctp/lib/pkgconfig:/src/.deps/libsoup/lib/pkgconfig
RUN test -n "$(pkg-config --variable=moat_patches usrsctp)" \
    && grep -q openssl .deps/libsrtp/lib/pkgconfig/libsrtp2.pc \
    && meson setup build --buildtype=release -Db_ndebug=true --prefix=/usr \
    && ! grep -q "usrsctp without Moat's patches" build/meson-logs/meson-log.txt \
    && ninja -C build gateway/moat plugins/echo/moat-echo.so plugins/room/moat-room.so \
       tools/moat-flood \
    && meson install -C build --no-rebuild --quiet --tags runtime --destdir /stage \
    && meson install -C build --no-rebuild --quiet --tags flood --destdir /stage-flood

# The recorder needs one element of gstreamer1.0-plugins-bad, opusparse,
# whose library needs only what plugins-base brings: the image takes that
# file alone (the whole package and its dependencies are about 300 MB).
FROM ${BASE} AS opusparse
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       gstreamer1.0-plugins-bad \
    && cp /usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstopusparse.so /libgstopusparse.so

FROM ${BASE} AS gateway
ENV DEBIAN_FRONTEND=noninteractive
# G.722 transcoding (ng calls) needs gstreamer1.0-libav, which brings all of
# FFmpeg (about 200 MB): left out unless asked for with
# --build-arg EXTRA_PACKAGES=gstreamer1.0-libav.
ARG EXTRA_PACKAGES=
# Runtime libraries only: GLib (+ glib-networking for HTTPS), libnice,
# libsoup, jansson, OpenSSL, libbpf, GStreamer and the plugins the recorder
# uses (base, good, and opusparse from bad, below); curl for the health
# check; setcap gives the binary CAP_BPF and CAP_PERFMON as permitted
# capabilities (used only when the container is given them:
# docker-compose.yml's cap_add).
# The user first, so that its fixed ids (999, what docker-compose.yml's
# recordings-owner chowns to) are not taken by a package's system group.
RUN groupadd --system --gid 999 moat \
    && useradd --system --uid 999 --gid moat --home-dir /var/lib/moat --no-create-home \
       --shell /usr/sbin/nologin moat \
    && apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends \
       libglib2.0-0 glib-networking libnice10 libsoup-3.0-0 libjansson4 libssl3 libbpf1 \
       libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 gstreamer1.0-plugins-base \
       gstreamer1.0-plugins-good zlib1g curl ca-certificates \
       libcap2-bin ${EXTRA_PACKAGES} \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /usr/share/doc/* /usr/share/man/* \
       /usr/share/locale/* /usr/share/info/*
COPY --from=build /stage/ /
# Debian's libsoup 3.2.3 rebuilt with Moat's patch (scripts/build-libsoup.sh:
# its server leaked the path of every request it refused itself), same
# soname, in place of the package's copy.
COPY --from=build /src/.deps/libsoup/lib/libsoup-3.0.so.0.6.0 /usr/lib/x86_64-linux-gnu/
COPY --from=opusparse /libgstopusparse.so /usr/lib/x86_64-linux-gnu/gstreamer-1.0/
RUN setcap cap_bpf,cap_perfmon+p /usr/bin/moat \
    && mkdir -p /var/lib/moat/recordings \
    && chown -R moat:moat /var/lib/moat
USER moat:moat
WORKDIR /var/lib/moat
ENV MOAT_RECORD_DIR=/var/lib/moat/recordings
EXPOSE 8088/tcp 20000-20063/udp
# https when [http] tls_cert is set (a self-signed certificate is accepted:
# this is the gateway checking itself on loopback).
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD scheme=http; [ -n "$MOAT_HTTP_TLS_CERT" ] && scheme=https; \
        curl -fsSk "$scheme://127.0.0.1:${MOAT_HTTP_PORT:-8088}/healthz" >/dev/null || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/moat"]
CMD ["--config", "/etc/moat/moat.conf"]

FROM gateway AS flood
COPY --from=build /stage-flood/usr/bin/moat-flood /usr/bin/moat-flood
ENTRYPOINT ["/usr/bin/moat-flood"]
CMD ["--help"]

# The default target.
FROM gateway
