# One image with the three binaries: `webdata` (API), `webdata-worker`,
# `webdata-operator`. The chart picks the command per Deployment.
#
#   docker build -t webdata:dev .
#
# Build stage: the workspace, release profile. Nothing downloads at run time.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin webdata --bin webdata-worker --bin webdata-operator \
 && mkdir /out \
 && cp target/release/webdata target/release/webdata-worker target/release/webdata-operator /out/

# Run stage: Debian slim with CA certificates. Workers render through the
# pool's Selenium/Chrome pods (WEBDATA_WEBDRIVER_URL), so no browser here.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /var/lib/webdata --create-home webdata
COPY --from=build /out/ /usr/local/bin/
USER 10001
WORKDIR /var/lib/webdata
ENV WEBDATA_LISTEN=0.0.0.0:3002 \
    WEBDATA_LOG_FORMAT=json
EXPOSE 3002
ENTRYPOINT ["/usr/local/bin/webdata"]
CMD ["serve"]
