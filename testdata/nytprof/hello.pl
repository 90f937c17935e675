# A tiny program profiled by Devel::NYTProf for testdata/nytprof/hello.nytprof.out.
use strict;
use warnings;

sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }

my $total = 0;
for my $i (1 .. 12) {
    $total += fib($i);
}
print "total $total\n";
