# Quell: build with the offline query data in .sqlx/, run as an unprivileged user.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
ENV SQLX_OFFLINE=true
RUN cargo build --release --locked

FROM debian:bookworm-slim
RUN useradd --system --home /app quell
WORKDIR /app
COPY --from=build /src/target/release/quell /usr/local/bin/quell
COPY static /app/static
ENV QUELL_BIND=0.0.0.0:3000 QUELL_STATIC_DIR=/app/static
USER quell
EXPOSE 3000
CMD ["quell", "serve"]
