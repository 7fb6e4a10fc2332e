#!/usr/bin/perl
# harness.pl -- run TAP test files with prove's harness (TAP::Harness), then
# print "tap: P passed, F failed", counted per assertion: P passing
# assertions over all files; F failing ones, plus one for each file that
# died, exited non-zero or did not run its plan (so that a file which stops
# half way is not counted as its passing half).
use strict;
use warnings;
use TAP::Harness;

my @files = @ARGV;
my $harness = TAP::Harness->new({ verbosity => 1, timer => 1, lib => [] });
my $agg = $harness->runtests(@files);
my ($pass, $fail) = (0, 0);
for my $f ($agg->descriptions)
{
	my ($parser) = $agg->parsers($f);
	my $p = scalar($parser->passed);
	my $nf = scalar($parser->failed);
	my $broken = ($parser->exit || $parser->wait || $parser->has_problems && !$nf
		  || ($parser->tests_planned // -1) != $parser->tests_run) ? 1 : 0;
	# passed() counts TODO tests as passing; failing TODOs are not failures
	$pass += $p;
	$fail += $nf + $broken;
	printf "%-40s %4d passed, %d failed%s\n", $f, $p, $nf,
	  $broken ? ' (file did not finish cleanly)' : '';
}
print "tap: $pass passed, $fail failed\n";
exit($fail ? 1 : 0);
