package net.gamecommunity.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A TCP proxy on a loopback port to a service: for a test in which the service becomes reachable at a moment of its choosing. */
final class TcpProxy implements AutoCloseable {
  private final ServerSocket listening;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  /** @return a port nothing listens on now (a test starts a proxy there later) */
  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  TcpProxy(int port, URI target) throws IOException {
    listening = new ServerSocket();
    listening.setReuseAddress(true);
    listening.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    Thread accepting = new Thread(() -> {
      while (!listening.isClosed()) {
        try {
          Socket client = listening.accept();
          Socket service = new Socket(target.getHost(), target.getPort());
          sockets.add(client);
          sockets.add(service);
          pipe(client.getInputStream(), service.getOutputStream());
          pipe(service.getInputStream(), client.getOutputStream());
        } catch (IOException closed) {
          return;
        }
      }
    }, "tcp-proxy");
    accepting.setDaemon(true);
    accepting.start();
  }

  private static void pipe(InputStream from, OutputStream to) {
    Thread copying = new Thread(() -> {
      try (from; to) {
        from.transferTo(to);
      } catch (IOException ended) {
        // one side closed
      }
    }, "tcp-proxy-pipe");
    copying.setDaemon(true);
    copying.start();
  }

  @Override
  public void close() throws IOException {
    listening.close();
    for (Socket socket : sockets) socket.close();
  }
}
